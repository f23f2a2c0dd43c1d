"""Every output the documentation quotes is what the code prints, produced here.

A quoted output is a ``text`` block under an ``<!-- output: NAME -->`` line; each name is run
here as the page describes it, on the demo history, and its block must match line for line
(``…`` in a quoted line stands for anything, such as an id).  A page cannot quote an output
this test does not produce.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from ripplegraph.agent.context import Deployment
from ripplegraph.agent.graph import chat_graph
from ripplegraph.studio import DEMO_NAMESPACE
from tests.conftest import OFFLINE, RIPPLEGRAPH

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), ROOT / "studio" / "README.md"]
_OUTPUT = re.compile(r"<!-- output: ([\w.-]+) -->\n```text\n(.*?)```", re.DOTALL)
QUOTED = {name: block for page in PAGES for name, block in _OUTPUT.findall(page.read_text())}
HARBOR = "Should we go to Harbor Grill for Maya's birthday dinner?"


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``demo-store``, as ``ripplegraph seed-demo --store demo-store`` makes it."""
    folder = tmp_path_factory.mktemp("docs")
    run(folder, "seed-demo", "--store", "demo-store")
    return folder / "demo-store"


@pytest.fixture
def here(seeded: Path, tmp_path: Path) -> Path:
    """A folder holding a copy of the seeded ``demo-store`` (an output may write to it)."""
    shutil.copytree(seeded, tmp_path / "demo-store")
    return tmp_path


def run(folder: Path, *args: str) -> str:
    """``ripplegraph ARGS`` in ``folder``; what it printed, stdout then stderr."""
    done = subprocess.run(
        [RIPPLEGRAPH, *args], cwd=folder, capture_output=True, text=True, check=True,
        env={**os.environ, **OFFLINE},
    )  # fmt: skip
    return done.stdout + done.stderr


def chat_trace(folder: Path) -> str:
    """Studio's custom stream for the Harbor Grill question: node | decision | reason."""
    context = Deployment(store_dir=str(folder / "demo-store")).bind(namespace=DEMO_NAMESPACE)
    lines = [
        f"{event['node']} | {event['decision']} | {event['reason']}"
        for _, event in chat_graph.stream(
            {"messages": [HumanMessage(HARBOR)]},
            context=context,
            stream_mode="custom",
            subgraphs=True,
        )
    ]
    return "\n".join(lines) + "\n"


def trace_page(folder: Path) -> str:
    said = run(
        folder, "ask", HARBOR, "-n", "demo", "--store", "demo-store", "--html", "harbor.html"
    )
    return "".join(line + "\n" for line in said.splitlines() if line.startswith("trace page:"))


def export_import(folder: Path) -> str:
    return run(folder, "export", "-n", "demo", "--out", "demo.jsonl", "--store", "demo-store") + (
        run(folder, "import", "demo.jsonl", "--store", "elsewhere")
    )


PRODUCED: dict[str, Callable[[Path], str]] = {
    "chat-trace": chat_trace,
    "trace-page": trace_page,
    "export-import": export_import,
}


def test_every_quoted_output_is_produced_here() -> None:
    assert set(QUOTED) == set(PRODUCED)


@pytest.mark.parametrize("name", sorted(PRODUCED))
def test_the_quoted_output_is_what_the_code_prints(name: str, here: Path) -> None:
    printed = PRODUCED[name](here).splitlines()
    quoted = QUOTED[name].splitlines()
    assert len(printed) == len(quoted), (printed, quoted)
    for said, shown in zip(printed, quoted, strict=True):
        pattern = ".*".join(re.escape(part) for part in shown.split("…"))
        assert re.fullmatch(pattern, said), f"the docs quote\n  {shown}\nthe code prints\n  {said}"
