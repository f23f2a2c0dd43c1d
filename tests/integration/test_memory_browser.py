"""The memory browser (``ripplegraph ui``) served for real and driven in headless Chromium.

One ``ripplegraph ui`` process serves a store holding the demo history; Playwright drives
Debian's ``chromium`` (no browser download) through every page, a search, a click-through
from a namespace to a memory to its neighbour, adding a memory whose text is markup and
forgetting one down to the bytes.  The refusals (a form without the page's token, a
cross-site post, a namespace or store the process was not given, an unknown parameter) are
plain HTTP requests to the same server.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ripplegraph.agent.cli import app
from ripplegraph.studio import DEMO_NAMESPACE, demo_sessions
from tests.conftest import deployed, free_port, wait_for_http
from tests.integration.conftest import ingest
from tests.integration.test_trace_page import CHROMIUM_FLAGS, HARBOR, chromium, watched

pytestmark = pytest.mark.integration
MARKUP = '</td><script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'
NEEDLE = b"window.pwned = 1"
"""A piece of the markup every copy holds, raw or JSON-escaped."""
PAGE_LIMIT = 200_000
TOKEN = "kq3-Vd8s-Lm2x-Pz7w-Rt4n-Hb6c"
SCREENSHOTS = os.environ.get("RIPPLEGRAPH_UI_SCREENSHOTS")
"""A folder to write each page's screenshot to (the README's pictures); unset: none."""


@dataclass
class Served:
    url: str
    store: Path
    other: Path
    problems: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``ripplegraph ui`` on a free loopback port over a store holding the demo."""
    folder = tmp_path_factory.mktemp("browser")
    store, other = folder / "store", folder / "other"
    ingest(deployed(store_dir=str(store)), DEMO_NAMESPACE, demo_sessions())
    ingest(deployed(store_dir=str(store)), "not-served", demo_sessions()[:1])
    ingest(deployed(store_dir=str(other)), "elsewhere", demo_sessions()[:1])
    port = free_port()
    command = [
        str(Path(sys.executable).parent / "ripplegraph"), "ui", "--store", str(store),
        "--port", str(port), "-n", DEMO_NAMESPACE,
    ]  # fmt: skip
    log = (folder / "ui.log").open("wb")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_http(f"http://127.0.0.1:{port}/", 60, process)
        yield Served(f"http://127.0.0.1:{port}", store, other)
    finally:
        process.terminate()
        process.wait(timeout=20)
        log.close()


def request(
    url: str, data: dict[str, str] | None = None, headers: dict[str, str] | None = None
) -> tuple[int, str]:
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    try:
        with urllib.request.urlopen(urllib.request.Request(url, body, headers or {})) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    path = chromium()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=path, args=CHROMIUM_FLAGS)
        try:
            yield launched
        finally:
            launched.close()


def shot(page: Any, name: str) -> None:
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SCREENSHOTS) / f"ui_{name}.png"), full_page=False)


def store_holds(store: Path, needle: bytes) -> list[str]:
    """Files under the store whose bytes hold ``needle``."""
    return [p.name for p in store.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_every_page_loads_clean_and_the_walk_works(served: Served, browser: Any) -> None:
    problems: list[str] = []
    page = watched(browser.new_page(viewport={"width": 1280, "height": 860}), problems)
    sizes: dict[str, int] = {}

    def visit(url: str, name: str) -> None:
        response = page.goto(served.url + url, wait_until="load")
        assert response is not None and response.status == 200, url
        assert "script-src 'self'" in (response.headers.get("content-security-policy") or "")
        sizes[name] = len(response.body())
        shot(page, name)

    visit("/", "namespaces")
    assert page.inner_text("table").count(DEMO_NAMESPACE) == 1
    assert "not-served" not in page.inner_text("body")
    page.click(f"text={DEMO_NAMESPACE}")
    assert page.url.startswith(served.url + "/namespace?ns=demo")
    sizes["namespace"] = len(page.content())
    shot(page, "namespace")
    first = page.locator("table.list tbody tr a").first
    text = first.inner_text()
    first.click()
    assert page.url.startswith(served.url + "/memory?")
    assert text in page.inner_text("blockquote.memory")
    neighbour = page.locator("a.neighbour").first
    reached = neighbour.inner_text()
    neighbour.click()
    assert reached in page.inner_text("blockquote.memory")
    shot(page, "memory")
    visit("/person?ns=demo&name=Maya", "person")
    assert "allergic to seafood" in page.inner_text("main")
    visit("/namespace?ns=demo&kind=standing", "standing")
    rows = page.locator("table.list tbody tr")
    assert rows.count() > 0
    assert rows.count() == page.locator("table.list tbody tr .tag.standing").count() + (
        page.locator("table.list tbody tr .tag.superseded").count()
    )
    visit("/namespace?ns=demo&kind=root", "roots")
    visit("/namespace?ns=demo&speaker=Alex&since=2024-05-01&page=1", "filtered")
    speakers = page.locator("table.list tbody tr td:nth-child(2)").all_inner_texts()
    assert speakers and set(speakers) == {"Alex"}
    dates = page.locator("table.list tbody tr td:nth-child(4)").all_inner_texts()
    assert min(dates) >= "2024-05-01"
    page.goto(served.url + "/namespace?ns=demo")
    page.fill("input[name=q]", HARBOR)
    page.click("form[action='/ask'] button")
    page.wait_for_selector("ol.evidence")
    shot(page, "ask")
    assert "allergic to seafood" in page.inner_text("ol.evidence")
    assert "refine_counterfactually" in page.inner_text(".trace")
    page.click("#step-2 summary")  # the trace page's script runs under the app's policy
    assert page.locator("#step-2").evaluate("d => d.open") is True
    sizes["ask"] = len(page.content())
    page.close()
    assert problems == []
    assert max(sizes.values()) < PAGE_LIMIT, sizes


def test_markup_in_a_memory_stays_text_and_forgetting_leaves_no_bytes(
    served: Served, browser: Any
) -> None:
    problems: list[str] = []
    page = watched(browser.new_page(), problems)
    page.goto(served.url + "/namespace?ns=demo")
    page.fill("textarea[name=text]", MARKUP)
    page.fill("form[action='/add'] input[name=session]", "browser")
    page.click("form[action='/add'] button")
    assert page.url.startswith(served.url + "/memory?")
    assert MARKUP in page.inner_text("blockquote.memory")
    page.goto(served.url + "/namespace?ns=demo&session=browser")
    assert MARKUP in page.inner_text("table.list")
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert page.locator("table.list img").count() == 0
    memory_id = page.locator("table.list tbody tr").first.get_attribute("data-mid")
    assert memory_id
    assert store_holds(served.store, NEEDLE)  # the memory is there before
    page.goto(served.url + f"/memory?ns=demo&id={memory_id}")
    page.click("text=Forget this memory…")
    page.click("#confirm-forget")
    assert "Forgotten" in page.inner_text("p.done")
    assert MARKUP not in page.inner_text("body")
    page.close()
    assert problems == []
    assert store_holds(served.store, NEEDLE) == []
    assert store_holds(served.store, memory_id.encode()) == []
    status, _ = request(served.url + f"/memory?ns=demo&id={memory_id}")
    assert status == 404


def test_reading_works_with_javascript_off(served: Served, browser: Any) -> None:
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(served.url + "/namespace?ns=demo&kind=standing")
        page.locator("table.list tbody tr a").first.click()
        assert page.url.startswith(served.url + "/memory?")
        page.goto(served.url + "/ask?" + urllib.parse.urlencode({"ns": "demo", "q": HARBOR}))
        assert "allergic to seafood" in page.inner_text("ol.evidence")
    finally:
        context.close()


def test_changes_need_the_pages_token_and_the_process_serves_only_what_it_was_given(
    served: Served,
) -> None:
    status, listing = request(served.url + "/namespace?ns=demo&kind=standing")
    memory_id = re.findall(r'data-mid="([^"]+)"', listing)[0]
    token = re.findall(r'name="csrf" value="([^"]+)"', listing)[0]
    form = {"ns": "demo", "id": memory_id}
    assert request(served.url + "/forget", form)[0] == 403  # no token
    assert request(served.url + "/forget", {**form, "csrf": "guess"})[0] == 403
    cross = {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
    assert request(served.url + "/forget", {**form, "csrf": token}, cross)[0] == 403
    assert request(served.url + "/add", {"ns": "demo", "text": "x", "csrf": "guess"})[0] == 403
    assert request(served.url + f"/memory?ns=demo&id={memory_id}")[0] == 200  # still there
    assert request(served.url + "/namespace?ns=not-served")[0] == 403
    assert request(served.url + "/export?ns=not-served")[0] == 403
    assert request(served.url + "/namespace?ns=elsewhere")[0] == 403
    status, page = request(served.url + f"/namespace?ns=demo&store={served.other}")
    assert status == 400 and "store" in page
    assert request(served.url + "/", headers={"Host": "evil.example"})[0] == 421
    status, exported = request(served.url + "/export?ns=demo")
    assert status == 200 and '"type": "unit"' in exported.splitlines()[1]


def test_off_loopback_it_refuses_to_start_without_an_access_token(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["ui", "--store", str(tmp_path), "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert "--access-token" in result.output


def test_with_an_access_token_every_page_asks_for_it_first(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from ripplegraph.agent.surfaces.ui import create_app

    context = deployed(store_dir=str(tmp_path / "store"))
    client = TestClient(
        create_app(context, access_token=TOKEN, host="0.0.0.0"),
        base_url="http://10.0.0.5:8765",
        follow_redirects=False,
    )
    assert client.get("/").headers["location"] == "/login"
    assert client.post("/login", data={"token": "wrong"}).status_code == 403
    signed = client.post("/login", data={"token": TOKEN})
    assert signed.status_code == 303
    assert "samesite=strict" in signed.headers["set-cookie"].lower()
    assert TOKEN not in signed.headers["set-cookie"]
    assert client.get("/").status_code == 200
    assert client.get("/", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
