"""Every example in the README and the documentation runs here as written.

Blocks are found by the ``<!-- example: NAME -->`` line above them, so each page is the one
copy of its example (a page that shows another's includes it): change an example and this
test runs the change.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langgraph_sdk import get_sync_client
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from ripplegraph import Deployment, RippleGraphStore
from ripplegraph.agent.memory.items import namespace_of
from ripplegraph.agent.services import Services
from tests.conftest import OFFLINE, free_port, wait_for_http
from tests.langgraph_server import langgraph_dev
from tests.openai_server import Reply, Request, ScriptedOpenAI

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
BIN = str(Path(sys.executable).parent)
_EXAMPLE = re.compile(r"<!-- example: ([\w.]+) -->\n```\w+\n(.*?)```", re.DOTALL)
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FOUND = [(name, code, page) for page in PAGES for name, code in _EXAMPLE.findall(page.read_text())]
EXAMPLES = {name: code for name, code, _ in FOUND}
GRAPH = """
from langgraph.graph import START, MessagesState, StateGraph

builder = StateGraph(MessagesState)
builder.add_node("echo", lambda state: {"messages": []})
builder.add_edge(START, "echo")
graph = builder.compile()
"""


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty folder to run an example in, whose store is ``./memory``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RIPPLEGRAPH_STORE", str(tmp_path / "memory"))
    return tmp_path


def test_every_example_is_run_here_and_named_once() -> None:
    assert len(FOUND) == len(EXAMPLES), "two examples share a name"
    tested = {"python", "store", "trace", "langmem", "langgraph.json", "mcp", "cli", "ttl"}
    assert set(EXAMPLES) == tested
    assert {n for n, _, page in FOUND if page.name == "README.md"} == {"python", "store", "trace"}


def test_python(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    exec(EXAMPLES["python"], {})
    out = capsys.readouterr().out
    assert "allergic to shellfish" in out
    assert "User: I'm allergic to shellfish." in out.splitlines()[-2]  # the best of two
    assert (workdir / "maya.jsonl").read_text().count('"type": "unit"') == 2


def test_ttl(workdir: Path) -> None:
    scope: dict[str, object] = {}
    exec(EXAMPLES["ttl"], scope)
    store = scope["store"]
    assert isinstance(store, RippleGraphStore)
    (item,) = store.search(("users", "maya"), query="Where is Maya this week?", limit=1)
    assert item.key == "trip" and item.value["text"] == "I'm in Lisbon until Friday."
    memory = Services(Deployment(store_dir=str(workdir / "memory")).bind().deployment).store()
    (kept,) = memory.items(namespace_of(("users", "maya")), ["trip"])
    assert kept.ttl_minutes == 2 * 24 * 60 and kept.expires_at is not None


def test_store(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    exec(EXAMPLES["store"], {})
    assert capsys.readouterr().out.strip() == "Remember: I'm allergic to shellfish."


def test_langmem(
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
    serve: Callable[[Callable[[Request], Reply]], ScriptedOpenAI],
) -> None:
    plan = [
        Reply(tool_calls=[("manage_memory", {"content": "Maya is allergic to shellfish."})]),
        Reply(content="Noted."),
    ]
    server = serve(lambda request: plan.pop(0))
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    scope: dict[str, object] = {}
    exec(EXAMPLES["langmem"], scope)
    scope["agent"].invoke({"messages": [HumanMessage("I'm allergic to shellfish.")]})  # type: ignore[attr-defined]
    (item,) = RippleGraphStore(workdir / "memory").search(("memories", "maya"))
    assert item.value == {"content": "Maya is allergic to shellfish."}


def test_langgraph_json(workdir: Path) -> None:
    """A minimal app served by `langgraph dev`, its store named as the guide says."""
    (workdir / "memory_store.py").write_text("from ripplegraph import RippleGraphStore\n")
    (workdir / "graph.py").write_text(GRAPH)
    config = {"dependencies": ["."], "graphs": {"echo": "./graph.py:graph"}}
    config.update(json.loads(EXAMPLES["langgraph.json"]))
    (workdir / "langgraph.json").write_text(json.dumps(config))
    env = {**OFFLINE, "RIPPLEGRAPH_STORE": str(workdir / "memory")}
    with langgraph_dev("langgraph.json", env, workdir / "server.log", cwd=workdir) as url:
        store = get_sync_client(url=url).store
        store.put_item(("maya",), "allergy", {"text": "I'm allergic to shellfish."})
        found = store.search_items(("maya",), query="Book the oyster bar?")["items"]
    assert found[0]["key"] == "allergy" and found[0]["value"]["recall"]["reached_by"]
    assert RippleGraphStore(workdir / "memory").get(("maya",), "allergy") is not None


def test_mcp(workdir: Path) -> None:
    entry = json.loads(EXAMPLES["mcp"])["mcpServers"]["memory"]
    command = str(Path(BIN) / entry["command"])
    env = {**OFFLINE, "RIPPLEGRAPH_STORE": str(workdir / "memory")}

    async def use() -> str:
        async with Client(StdioServerParameters(command=command, args=entry["args"], env=env)) as c:
            await c.call_tool("remember", {"text": "I'm allergic to shellfish."})
            found = await c.call_tool("recall", {"query": "Book the oyster bar for Maya?"})
            return str(found.structured_content["context"])

    assert "allergic to shellfish" in asyncio.run(use())


def test_cli(workdir: Path) -> None:
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", EXAMPLES["cli"]],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **OFFLINE, "PATH": f"{BIN}:{os.environ['PATH']}"},
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "allergic to shellfish" in done.stdout
    assert "restored 2 units, 2 items into 'maya'" in done.stdout


def test_trace(workdir: Path) -> None:
    """The README's command-line steps in order, from the project's folder with its ``.venv``.

    The last one serves the memory browser until stopped: it is started, asked for its first
    page, and stopped.
    """
    (workdir / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    lines = EXAMPLES["trace"].strip().splitlines()
    serve = next(line for line in lines if line.startswith("ripplegraph ui "))
    env = {**os.environ, **OFFLINE}
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", "\n".join(line for line in lines if line != serve)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Harbor Grill" in (workdir / "page.html").read_text()
    port = free_port()
    process = subprocess.Popen(
        ["bash", "-euo", "pipefail", "-c", f"{lines[0]}\nexec {serve} --port {port}"], env=env
    )
    try:
        wait_for_http(f"http://127.0.0.1:{port}/", 60, process)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/namespace?ns=demo") as page:
            assert "Harbor Grill" in page.read().decode()
    finally:
        process.terminate()
        process.wait(timeout=20)
