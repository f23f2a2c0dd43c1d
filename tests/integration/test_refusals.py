"""Every surface refuses what it cannot keep, and what it refuses changes nothing.

One put no longer stops every tenant's writes; a namespace is one name on every surface; the
Python client is as strict as the command line; store files are their owner's; the command
line's file errors, Ctrl-C, long turns and terminal output are one line or the right thing.
"""

from __future__ import annotations

import asyncio
import json
import os
import pty
import signal
import socket
import stat
import subprocess
import time
from pathlib import Path

import pytest
from mcp import Client
from starlette.testclient import TestClient
from typer.testing import CliRunner

import ripplegraph
from ripplegraph import (
    InvalidNamespace,
    InvalidValueError,
    Memory,
    NotFoundError,
    RippleGraphError,
    RippleGraphStore,
)
from ripplegraph.agent.cli import app
from ripplegraph.agent.context import Deployed
from ripplegraph.agent.services import Services
from ripplegraph.agent.surfaces.mcp_server import build_server
from ripplegraph.agent.surfaces.ui import create_app
from tests.conftest import OFFLINE, RIPPLEGRAPH, deployed, free_port
from tests.integration.conftest import store_args

pytestmark = pytest.mark.integration
INVISIBLE = ["", "   ", "\u200b\u2060", "\x00\x1b\x07", "\t\n\r"]
"""Texts that show nothing: blank, zero-width, NUL and escape characters."""


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


# --- one put cannot stop another tenant's writes --------------------------------------------


def test_a_put_the_clock_cannot_finish_is_refused_before_it_is_logged(
    fresh_context: Deployed,
) -> None:
    items = RippleGraphStore(deployment=fresh_context.deployment)
    for ttl in (5e9, 1e300, float("nan"), float("inf"), -1.0):
        with pytest.raises(InvalidValueError, match="time to live"):
            items.put(("mallory",), "m1", {"text": "x"}, ttl=ttl)
    assert items.memory.unfinished_puts() == [] and items.memory.puts_set_aside() == []
    items.put(("alice",), "a1", {"text": "I keep bees."}, ttl=60)
    reopened = RippleGraphStore(deployment=fresh_context.deployment)
    assert reopened.get(("alice",), "a1") is not None
    assert items.memory.check().consistent


def test_a_put_that_cannot_finish_is_set_aside_and_withdrawn_by_repair(
    fresh_context: Deployed,
) -> None:
    store = RippleGraphStore(deployment=fresh_context.deployment)
    # A put logged by an earlier version, with a time to live that version let through.
    intent = {"value": {"text": "Poison pill."}, "index": None, "ttl": 5e9, "created": None,
              "user_name": "Mallory"}  # fmt: skip
    store.memory.begin_put("mallory", "m1", intent)
    store.put(("alice",), "a1", {"text": "Alice keeps bees on the roof."})  # finishes or sets aside
    assert [key for _, key, _, _ in store.memory.puts_set_aside()] == ["m1"]
    RippleGraphStore(deployment=fresh_context.deployment)  # opens again: nothing replayed
    store.put(("alice",), "a2", {"text": "Alice runs on Tuesdays."})
    assert [i.key for i in store.search(("alice",))] == ["a1", "a2"]

    code, output = cli("check", "--json", *store_args(fresh_context))
    report = json.loads(output)
    assert code == 1 and report["problems"]["puts set aside"] == 1
    code, output = cli("check", "--repair", "--json", *store_args(fresh_context))
    assert code == 0 and json.loads(output)["consistent_now"], output
    assert store.memory.puts_set_aside() == [] and store.memory.all_units("mallory") == []
    assert all("Poison" not in u.text for u in store.memory.all_units("alice"))


def test_a_put_cut_short_by_an_error_is_set_aside_and_the_caller_hears_it(
    fresh_context: Deployed, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = RippleGraphStore(deployment=fresh_context.deployment)
    memory = store.memory
    real = memory.save_item

    def broken(namespace: str, key: str, *args: object, **kwargs: object) -> object:
        if key == "m1":
            raise RuntimeError("the disk said no")
        return real(namespace, key, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(memory, "save_item", broken)
    with pytest.raises(RuntimeError, match="the disk said no"):
        store.put(("mallory",), "m1", {"text": "Half written."})
    store.put(("alice",), "a1", {"text": "Alice keeps bees."})  # not blocked, nothing replayed
    ((_, key, _, why),) = memory.puts_set_aside()
    assert key == "m1" and "the disk said no" in why
    assert store.withdraw_puts() == 1 and memory.all_units("mallory") == []
    assert memory.check().consistent


# --- one name, one namespace, on every surface ----------------------------------------------

NAMES = ["名前", "ns with space", "maya@example.com", "café/ana"]


@pytest.mark.parametrize("name", NAMES)
def test_a_name_reaches_the_same_memory_from_every_surface(name: str, tmp_path: Path) -> None:
    store = tmp_path / "store"
    context = deployed(store_dir=str(store))
    code, key = cli("add", "-n", name, "I keep bees on the roof.", "--store", str(store))
    assert code == 0, key
    code, listed = cli("list", "-n", name, "--json", "--store", str(store))
    assert code == 0 and json.loads(listed)[0]["key"] == key.strip()
    memory = Memory(store)
    assert memory.get(key.strip(), user_id=name) is not None
    memory.add("I run on Tuesdays.", user_id=name)
    assert len(memory.get_all(user_id=name)) == 2

    async def remembered() -> str:
        server = build_server(memory.store, memory.store.namespace_of(tuple(name.split("/"))))
        async with Client(server) as client:
            await client.call_tool("remember", {"text": "I cycle to work."})
            found = await client.call_tool("recall", {"query": "How do I get to work?"})
        return str(found.structured_content["context"])

    assert "cycle to work" in asyncio.run(remembered())
    browser = TestClient(create_app(context), base_url="http://127.0.0.1:8765")
    page = browser.get("/namespace", params={"ns": name})
    assert page.status_code == 200 and "cycle to work" in page.text
    token = page.text.split('name="csrf" value="')[1].split('"')[0]
    added = browser.post(
        "/add", data={"ns": name, "text": "I garden.", "csrf": token}, follow_redirects=False
    )
    assert added.status_code == 303, added.text
    code, listed = cli("list", "-n", name, "--json", "--store", str(store))
    assert len(json.loads(listed)) == 4
    code, names = cli("namespaces", "--store", str(store))
    assert name in names


@pytest.mark.parametrize("name", ["", "   ", "\x00", "\u200b", "a//b"])
def test_a_name_that_names_nothing_is_refused_by_every_surface(name: str, tmp_path: Path) -> None:
    store = tmp_path / "store"
    code, output = cli("add", "-n", name, "I keep bees.", "--store", str(store))
    assert code == 2 and output.startswith("error: namespace"), output
    with pytest.raises(InvalidNamespace):
        Memory(store).add("I keep bees.", user_id=name)
    with pytest.raises(RippleGraphError):
        RippleGraphStore(store).put(tuple(name.split("/")), "k", {"text": "I keep bees."})
    browser = TestClient(
        create_app(deployed(store_dir=str(store))), base_url="http://127.0.0.1:8765"
    )
    assert browser.get("/namespace", params={"ns": name}).status_code == 400
    code, output = cli("mcp", "-n", name, "--store", str(store))
    assert code == 2 and output.startswith("error: namespace"), output
    assert Services(deployed(store_dir=str(store)).deployment).store().holding_namespaces() == []


def test_the_error_classes_are_importable_from_ripplegraph() -> None:
    for name in ("InvalidValueError", "NotFoundError", "InvalidNamespace", "PartUnavailable"):
        assert issubclass(getattr(ripplegraph, name), RippleGraphError), name
    assert issubclass(NotFoundError, LookupError) and issubclass(InvalidValueError, ValueError)


# --- careless input: refused on every surface, naming what is wrong -------------------------


@pytest.mark.parametrize("text", INVISIBLE)
def test_text_that_shows_nothing_is_refused_by_every_surface(text: str, tmp_path: Path) -> None:
    store = tmp_path / "store"
    memory = Memory(store)
    with pytest.raises(InvalidValueError, match="nothing to remember"):
        memory.add(text, user_id="ana")
    with pytest.raises(InvalidValueError, match="content is empty"):
        memory.add([{"role": "user", "content": text}], user_id="ana")
    with pytest.raises(InvalidValueError, match=r"value\.text is empty"):
        memory.store.put(("ana",), "k", {"text": text})
    code, output = cli("add", "-n", "ana", text, "--store", str(store))
    assert code == 2 and "nothing to remember" in output, output

    async def remember() -> tuple[bool, str]:
        async with Client(build_server(memory.store, "ana")) as client:
            said = await client.call_tool("remember", {"text": text})
        return bool(said.is_error), said.content[0].text

    refused, said = asyncio.run(remember())
    assert refused and "nothing to remember" in said
    memory.add("I keep bees.", user_id="ana")  # the namespace exists for the browser's form
    browser = TestClient(
        create_app(deployed(store_dir=str(store))), base_url="http://127.0.0.1:8765"
    )
    token = browser.get("/namespace?ns=ana").text.split('name="csrf" value="')[1].split('"')[0]
    answer = browser.post("/add", data={"ns": "ana", "text": text or " ", "csrf": token})
    assert answer.status_code == 400 and "text" in answer.text
    assert len(memory.get_all(user_id="ana")) == 1


def test_a_malformed_conversation_is_refused_naming_the_field(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "store")
    with pytest.raises(InvalidValueError, match=r"messages\[0\]\.role"):
        memory.add([{"text": "hello"}], user_id="ana")
    with pytest.raises(InvalidValueError, match=r"messages\[1\]\.content is empty"):
        memory.add([{"role": "user", "content": "Hi."}, {"role": "ai", "content": ""}], user_id="a")
    with pytest.raises(InvalidValueError, match="memory_id"):
        memory.get("", user_id="ana")
    assert memory.store.memory.holding_namespaces() == []


def test_the_namespace_page_refuses_a_date_past_the_calendar(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "store")
    memory.add("I keep bees.", user_id="ana")
    browser = TestClient(
        create_app(deployed(store_dir=str(tmp_path / "store"))), base_url="http://127.0.0.1:8765"
    )
    for field in ("since", "until"):
        answer = browser.get("/namespace", params={"ns": "ana", field: "9999-12-31"})
        assert answer.status_code == 400 and field in answer.text


# --- the command line's edges -----------------------------------------------------------------


def test_a_long_turn_in_a_file_becomes_several_memories(tmp_path: Path) -> None:
    reply = "```python\nprint('hello')\n```\n\n" * 1_500  # 42,000 characters of an answer
    sessions = {"sessions": [{"id": "s1", "turns": [
        {"speaker": "Ana", "text": "How do I print?"},
        {"speaker": "Assistant", "text": reply, "id": "t2"},
    ]}]}  # fmt: skip
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(sessions))
    code, output = cli("ingest", str(path), "-n", "ana", "--json", "--store", str(tmp_path / "s"))
    assert code == 0, output
    units = Services(deployed(store_dir=str(tmp_path / "s")).deployment).store().all_units("ana")
    pieces = sorted(t for u in units for t in u.provenance.turn_ids if t.startswith("t2"))
    assert pieces == ["t2", "t2#2", "t2#3"]


@pytest.fixture(scope="module")
def marked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store whose memory holds markup, a terminal link and escape codes."""
    store = tmp_path_factory.mktemp("marked") / "store"
    memory = Memory(store)
    memory.add(
        "Maya's allergy note [/bold] [link=https://evil.example]click[/link] "
        + "bees " * 60
        + "\x1b]0;pwned\x07\x1b[2J the end.",
        user_id="ana",
    )
    return store


def test_memory_text_is_printed_as_text_on_every_terminal_path(
    marked: Path, tmp_path: Path
) -> None:
    for args in (
        ["ask", "What is Maya's allergy?", "-n", "ana"],
        ["ask", "What is Maya's allergy?", "-n", "ana", "--trace"],
        ["ask", "What is Maya's allergy?", "-n", "ana", "--html", str(tmp_path / "p.html")],
        ["list", "-n", "ana"],
    ):
        code, output = cli(*args, "--store", str(marked))
        assert code == 0, output
        assert "[/bold] [link=https://evil.example]click[/link]" in output
        assert "\x1b" not in output and "\x07" not in output
    code, output = cli("ask", "What is Maya's allergy?", "-n", "ana", "--store", str(marked))
    line = next(row for row in output.splitlines() if "allergy note" in row)
    assert line.rstrip().endswith("the end.</memory>"), "not wrapped when not a terminal"
    listed = subprocess.run(
        [RIPPLEGRAPH, "list", "-n", "ana", "--store", str(marked)],
        capture_output=True, text=True, env={**os.environ, **OFFLINE, "COLUMNS": "40"},
        check=True,
    )  # fmt: skip
    assert "\\x1b]0;pwned\\x07\\x1b[2J the end." in listed.stdout


def test_file_mistakes_are_one_error_line(marked: Path, tmp_path: Path) -> None:
    where = ["--store", str(marked)]
    for out, said in (
        (tmp_path, "Is a directory"),
        (tmp_path / "missing" / "ana.jsonl", "No such file or directory"),
        (Path("/dev/full"), "No space left on device"),
    ):
        code, output = cli("export", "-n", "ana", "--out", str(out), *where)
        assert code == 2 and output.startswith(f"error: {said}") and output.count("\n") == 1, output
    started = time.monotonic()
    code, output = cli("import", "/dev/zero", *where)
    assert code == 2 and "longer than" in output and time.monotonic() - started < 10
    code, output = cli("forget", "-n", "ana", "--person", "Nobody", *where)
    assert (
        code == 2
        and output == "error: nothing to forget: no memory in 'ana' is of person 'Nobody'\n"
    )
    code, output = cli("ui", "--store", str(tmp_path / "typo"))
    assert code == 2 and output.startswith("error: no store at"), output


def test_files_are_their_owners_alone(marked: Path, tmp_path: Path) -> None:
    cli("ask", "What is Maya's allergy?", "-n", "ana", "--store", str(marked))
    cli("export", "-n", "ana", "--out", str(tmp_path / "ana.jsonl"), "--store", str(marked))
    cli("ask", "allergy?", "-n", "ana", "--html", str(tmp_path / "p.html"), "--store", str(marked))
    made = [marked, *marked.rglob("*"), tmp_path / "ana.jsonl", tmp_path / "p.html"]
    assert (marked / "checkpoints.sqlite").is_file()
    for path in made:
        if path.parent.name != "chroma" or path.is_dir():  # Chroma's own files: in a 0700 folder
            assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path
    old = tmp_path / "old"
    Memory(old).add("I keep bees.", user_id="ana")
    for path in [old, *old.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)  # as an earlier version left them
    subprocess.run(
        [RIPPLEGRAPH, "list", "-n", "ana", "--store", str(old)],
        env={**os.environ, **OFFLINE}, check=True, capture_output=True,
    )  # fmt: skip
    assert stat.S_IMODE(old.stat().st_mode) == 0o700
    assert stat.S_IMODE((old / "chroma").stat().st_mode) == 0o700
    assert stat.S_IMODE((old / "graph.sqlite").stat().st_mode) == 0o600


def test_a_busy_port_is_one_error_line_and_nothing_announced(marked: Path) -> None:
    port = free_port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        for verb in (["ui"], ["mcp", "-n", "ana", "--transport", "streamable-http"]):
            ran = subprocess.run(
                [RIPPLEGRAPH, *verb, "--store", str(marked), "--port", str(port)],
                capture_output=True, text=True, env={**os.environ, **OFFLINE}, timeout=120,
            )  # fmt: skip
            assert ran.returncode == 2, ran.stderr
            assert (
                ran.stderr
                == f"error: cannot listen on http://127.0.0.1:{port}: Address already in use\n"
            )


def test_add_with_nothing_piped_on_a_terminal_says_so_at_once(tmp_path: Path) -> None:
    terminal, other = pty.openpty()
    try:
        ran = subprocess.run(
            [RIPPLEGRAPH, "add", "-n", "ana", "--store", str(tmp_path / "s")],
            stdin=other, capture_output=True, text=True, timeout=60,
            env={**os.environ, **OFFLINE},
        )  # fmt: skip
    finally:
        os.close(terminal)
        os.close(other)
    assert ran.returncode == 2 and "pipe it in" in ran.stderr


def test_ctrl_c_during_add_is_one_line_and_nothing_unacknowledged_is_kept(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    cli("add", "-n", "ana", "A first memory.", "--store", str(store))
    long_text = "Bees need water in summer. " * 3_000  # 81,000 characters: five memories
    printed: list[str] = []
    for delay in (0.1, 0.3, 0.6, 0.9, 1.2, 1.5, 1.8, 2.1, 2.4, 2.8, 3.2):
        process = subprocess.Popen(
            [RIPPLEGRAPH, "add", "-n", "ana", long_text, "--store", str(store)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, **OFFLINE},
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )  # fmt: skip
        time.sleep(delay)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
        assert process.returncode in (0, 130), (delay, process.returncode, err)
        assert err in ("", "error: interrupted\n"), (delay, err)
        printed += out.split()
    memory = Memory(store)
    kept = [item.key for item in memory.get_all(user_id="ana")][1:]
    assert kept == printed, "what was acknowledged is kept, and only that"
    assert (
        memory.store.memory.unfinished_puts() == [] and memory.store.memory.puts_set_aside() == []
    )
    assert memory.store.memory.check().consistent
