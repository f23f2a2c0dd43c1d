"""The trace page in a real headless Chromium: loads offline, shows the run, steps expand.

Needs Debian's ``chromium`` (``.ci/run`` installs it); without it the test is skipped with a
line saying so.  Playwright drives that browser (``executable_path``), downloading none.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageStat
from typer.testing import CliRunner

from ripplegraph.agent.cli import app
from ripplegraph.studio import DEMO_NAMESPACE, demo_sessions
from tests.conftest import deployed
from tests.integration.conftest import ingest

pytestmark = pytest.mark.integration
HARBOR = "Should we go to Harbor Grill for Maya's birthday dinner?"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--no-first-run",
    "--disable-quic",
]


def chromium() -> str:
    found = os.environ.get("RIPPLEGRAPH_TEST_CHROMIUM") or shutil.which("chromium")
    if not found:
        pytest.skip("no headless Chromium (apt-get install chromium): trace page not loaded")
    return found


def watched(page: Any, problems: list[str]) -> Any:
    """The page, with every console error, page error and failed request noted."""
    page.on(
        "console",
        lambda m: (
            problems.append(f"console {m.type}: {m.text}")
            if m.type in ("error", "warning")
            else None
        ),
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on(  # one the test's own next navigation cut short (the icon, say) did not fail
        "requestfailed",
        lambda r: (
            problems.append(f"request failed: {r.url} {r.failure}")
            if "ERR_ABORTED" not in (r.failure or "")
            else None
        ),
    )
    page.on(
        "response",
        lambda r: problems.append(f"{r.status}: {r.url}") if r.status >= 400 else None,
    )
    return page


@pytest.fixture(scope="module")
def asked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict, Path]]:
    """The Harbor Grill question asked with ``--html`` on the demo history."""
    folder = tmp_path_factory.mktemp("trace-page")
    store = folder / "store"
    ingest(deployed(store_dir=str(store)), DEMO_NAMESPACE, demo_sessions())
    page = folder / "harbor.html"
    result = CliRunner().invoke(
        app,
        ["ask", HARBOR, "-n", DEMO_NAMESPACE, "--store", str(store), "--thread", "harbor",
         "--json", "--html", str(page)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout.strip().splitlines()[-1])
    yield page, payload, store


def test_trace_command_writes_the_same_page_from_the_checkpoint(
    asked: tuple[Path, dict, Path],
) -> None:
    page, _, store = asked
    again = page.with_name("again.html")
    result = CliRunner().invoke(
        app, ["trace", "harbor", "--store", str(store), "--html", str(again)]
    )
    assert result.exit_code == 0, result.output
    assert again.read_text() == page.read_text()
    assert page.stat().st_size < 1_000_000


def test_page_loads_offline_in_chromium_and_shows_the_run(
    asked: tuple[Path, dict, Path],
) -> None:
    from playwright.sync_api import sync_playwright

    page_path, payload, _ = asked
    url = page_path.resolve().as_uri()
    problems: list[str] = []
    requests: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            watched(page, problems)
            page.on("request", lambda r: requests.append(r.url))
            page.goto(url, wait_until="load")
            loaded_ms = page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")
            shot = Image.open(io.BytesIO(page.screenshot()))
            text = page.inner_text("body")
            step = page.locator("#step-2")
            assert step.evaluate("d => d.open") is False
            assert not page.is_visible("#step-2 table.kv")
            page.click("#step-2 summary")
            assert step.evaluate("d => d.open") is True
            assert page.is_visible("#step-2 table.kv")
            first = page.locator("svg .mem").first
            memory_id = first.get_attribute("data-mid")
            first.click()
            row_class = page.get_attribute(f'tr[data-mid="{memory_id}"]', "class")
        finally:
            browser.close()
    assert problems == []
    assert requests == [url], "the page must make no request beyond its own file"
    assert loaded_ms < 1000
    grey = ImageStat.Stat(shot.convert("L"))
    assert grey.stddev[0] > 20 and len(shot.convert("RGB").getcolors(1 << 20) or []) > 50
    visited = [event["node"] for event in payload["trace"]]
    assert "refine_counterfactually" in visited
    for node in visited:
        assert node in text
    assert "allergic to seafood" in text
    assert HARBOR in text
    assert row_class == "hl"
