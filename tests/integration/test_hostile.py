"""The hostile-input suite: generated bad values through every surface, another tenant unharmed.

Each surface gets ``REQUESTS`` generated requests from one tenant (``mallory``): the command
line, ``Memory``, ``RippleGraphStore``, MCP over HTTP, the memory browser and the served
graphs behind authentication.  After every request the answer is a refusal in RippleGraph's
words or a success: no traceback, no exception outside ``RippleGraphError``, no 5xx, and no
put left logged in the store (the state in which one tenant's put blocked every other's).
Every ``CHECK_EVERY`` requests another tenant (``alice``) opens the store again, puts and
finds what she put; at the end she does so from a new process (a new server for the served
graphs).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from langgraph_sdk import get_sync_client
from typer.testing import CliRunner

from ripplegraph import Memory, RippleGraphError, RippleGraphStore
from ripplegraph.agent.cli import app
from ripplegraph.agent.surfaces import auth
from tests.conftest import OFFLINE, RIPPLEGRAPH, free_port
from tests.hostile import (
    ATTACKER,
    VICTIM,
    anything,
    dates,
    fuzzed,
    messages,
    mostly,
    names,
    numbers,
    texts,
    ttls,
    tuples,
    values,
)
from tests.integration.test_network_surfaces import serving
from tests.langgraph_server import langgraph_dev

pytestmark = pytest.mark.integration
REQUESTS = 2_000
CHECK_EVERY = 100
keys = st.one_of(st.sampled_from(["k1", "k2", "", "m_0", "../k", "\x00"]), texts, anything)
queries = st.one_of(st.sampled_from(["What does Mallory like?", "tea?"]), texts, anything)


class Victim:
    """Alice, who shares the store: after the attacker's requests she still puts and finds."""

    def __init__(self, store: Path) -> None:
        self.store = store
        self.puts = 0

    def still_served(self) -> None:
        """Open the store again, put a memory and find it; nothing is left logged."""
        items = RippleGraphStore(self.store)  # opening finishes (or sets aside) logged puts
        self.puts += 1
        key = f"hive-{self.puts}"
        items.put((VICTIM,), key, {"text": f"Alice keeps bees in hive number {self.puts}."})
        found = items.search((VICTIM,), query=f"Which bees are in hive number {self.puts}?")
        assert key in [item.key for item in found], (key, [item.key for item in found])
        nothing_left_logged(items)

    def served_by_a_new_process(self) -> None:
        """A process that opens the store afresh lists and recalls her memories."""
        where = ["-n", VICTIM, "--store", str(self.store)]
        listed = run_cli("list", *where, "--json", "--limit", "1000")
        assert len(json.loads(listed)) >= self.puts
        assert "hive number 1." in run_cli("ask", "Which bees are in hive number 1?", *where)
        assert json.loads(run_cli("check", "--json", "--store", str(self.store)))["consistent"]


def run_cli(*args: str) -> str:
    done = subprocess.run(
        [RIPPLEGRAPH, *args], capture_output=True, text=True, env={**os.environ, **OFFLINE}
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def nothing_left_logged(items: RippleGraphStore) -> None:
    assert items.memory.unfinished_puts() == [], "a put was left logged"
    assert items.memory.puts_set_aside() == [], "a put was set aside"


def attack(
    victim: Victim,
    request: Callable[[st.DataObject], str],
    after: Callable[[], None],
    also: Callable[[], None] = lambda: None,
) -> Counter[str]:
    """``REQUESTS`` generated requests; ``after`` checks each, the victim every so often.

    ``also`` is what the victim does through the surface itself, beside opening the store.
    """
    outcomes: Counter[str] = Counter()

    @fuzzed(REQUESTS)
    @given(data=st.data())
    def one(data: st.DataObject) -> None:
        outcomes[request(data)] += 1
        after()
        if sum(outcomes.values()) % CHECK_EVERY == 0:
            victim.still_served()
            also()

    victim.still_served()
    one()
    assert sum(outcomes.values()) >= REQUESTS
    victim.served_by_a_new_process()
    return outcomes


def refused_or_done(call: Callable[[], object], *also: type[BaseException]) -> str:
    """``ok`` or ``refused``; anything but a ``RippleGraphError`` (or ``also``) fails the test."""
    try:
        call()
    except (RippleGraphError, *also):
        return "refused"
    return "ok"


# --- in process: the Python client, the LangGraph store, the command line -------------------


def test_the_python_client(tmp_path: Path) -> None:
    store = tmp_path / "store"
    memory = Memory(store)
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(b"\xff\xfe{not json\n" * 10)
    paths = st.sampled_from(
        [
            tmp_path / "out.jsonl",
            tmp_path,
            tmp_path / "no" / "out.jsonl",
            Path("/dev/full"),
            garbage,
            Path("/dev/zero"),
            tmp_path / "missing.jsonl",
        ]
    )

    def request(data: st.DataObject) -> str:
        verb = data.draw(
            st.sampled_from(
                [
                    "add",
                    "add",
                    "converse",
                    "search",
                    "get",
                    "get_all",
                    "delete",
                    "delete_all",
                    "export",
                    "import",
                ]
            )
        )
        user = data.draw(names)
        calls: dict[str, Callable[[], object]] = {
            "add": lambda: memory.add(
                data.draw(texts),
                user_id=user,
                session_id=data.draw(st.none() | st.none() | texts),
                date=data.draw(st.none() | st.none() | st.none() | dates),
            ),
            "converse": lambda: memory.add(data.draw(messages), user_id=user),
            "search": lambda: memory.search(
                data.draw(queries), user_id=user, limit=data.draw(numbers)
            ),
            "get": lambda: memory.get(data.draw(keys), user_id=user),
            "get_all": lambda: memory.get_all(
                user_id=user, limit=data.draw(numbers), offset=data.draw(numbers)
            ),
            "delete": lambda: memory.delete(data.draw(keys), user_id=user),
            "delete_all": lambda: memory.delete_all(user_id=user),
            "export": lambda: memory.export(data.draw(paths), user_id=user),
            "import": lambda: memory.import_(data.draw(paths)),
        }
        files = (OSError,) if verb in ("export", "import") else ()
        return f"{verb}:{refused_or_done(calls[verb], *files)}"

    outcomes = attack(Victim(store), request, lambda: nothing_left_logged(memory.store))
    assert outcomes["add:ok"] and outcomes["add:refused"] and outcomes["search:ok"]


def test_the_langgraph_store(tmp_path: Path) -> None:
    store = tmp_path / "store"
    items = RippleGraphStore(store)

    def request(data: st.DataObject) -> str:
        verb = data.draw(
            st.sampled_from(["put", "put", "get", "search", "delete", "namespaces", "aput"])
        )
        where = data.draw(tuples)
        calls: dict[str, Callable[[], object]] = {
            "put": lambda: items.put(
                where,
                data.draw(keys),
                data.draw(values),
                index=data.draw(st.sampled_from([None, False, ["text"], ["x.y"]]) | anything),
                ttl=data.draw(ttls),
            ),
            "aput": lambda: asyncio.run(
                items.aput(where, data.draw(keys), data.draw(values), ttl=data.draw(ttls))
            ),
            "get": lambda: items.get(where, data.draw(keys), refresh_ttl=data.draw(anything)),
            "search": lambda: items.search(
                where,
                query=data.draw(st.none() | queries),
                filter=data.draw(st.none() | st.dictionaries(st.text(max_size=3), anything)),
                limit=data.draw(numbers),
                offset=data.draw(numbers),
            ),
            "delete": lambda: items.delete(where, data.draw(keys)),
            "namespaces": lambda: items.list_namespaces(
                prefix=data.draw(st.none() | tuples),
                max_depth=data.draw(st.none() | numbers),
                limit=data.draw(numbers),
                offset=data.draw(numbers),
            ),
        }
        return f"{verb}:{refused_or_done(calls[verb])}"

    outcomes = attack(Victim(store), request, lambda: nothing_left_logged(items))
    assert outcomes["put:ok"] and outcomes["put:refused"] and outcomes["search:ok"]


def test_the_command_line(tmp_path: Path) -> None:
    store = tmp_path / "store"
    where = ["--store", str(store)]
    runner = CliRunner()
    files = tmp_path / "files"
    files.mkdir()

    def ingest_file(data: st.DataObject) -> str:
        path = files / f"{data.draw(st.integers(0, 5))}.json"
        turns = st.fixed_dictionaries({"speaker": texts | anything, "text": texts | anything})
        sessions = st.lists(
            st.fixed_dictionaries(
                {"id": texts | anything, "date": dates, "turns": st.lists(turns, max_size=3)}
            ),
            max_size=2,
        )
        content = data.draw(
            st.one_of(
                sessions.map(lambda s: json.dumps({"sessions": s})),
                st.binary(max_size=50).map(lambda b: b.decode("latin-1")),
            )
        )
        path.write_text(content, encoding="utf-8", errors="surrogatepass")
        return str(path)

    def request(data: st.DataObject) -> str:
        verb = data.draw(
            st.sampled_from(
                [
                    "add",
                    "add",
                    "stdin",
                    "ask",
                    "list",
                    "namespaces",
                    "forget",
                    "export",
                    "import",
                    "ingest",
                    "trace",
                ]
            )
        )
        name = data.draw(names)
        text = data.draw(texts)
        date = data.draw(dates)
        dated = [] if date is None else ["--date", str(date)]
        args: list[str] = {
            "add": ["add", "-n", name, text, *dated],
            "stdin": ["add", "-n", name, "-", "--speaker", text],
            "ask": [
                "ask",
                str(data.draw(queries)),
                "-n",
                name,
                "--recipe",
                data.draw(st.sampled_from(["full", "first_hop", "everything"])),
            ],
            "list": ["list", "-n", name, "--limit", str(data.draw(numbers)), "--json"],
            "namespaces": ["namespaces", "--prefix", name],
            "forget": [
                "forget",
                "-n",
                name,
                data.draw(st.sampled_from(["--memory-id", "--session", "--person"])),
                text,
            ],
            "export": [
                "export",
                "-n",
                name,
                "--out",
                data.draw(st.sampled_from([str(tmp_path / "x.jsonl"), str(tmp_path), "/dev/full"])),
            ],
            "import": [
                "import",
                data.draw(st.sampled_from([str(tmp_path / "x.jsonl"), "/dev/zero"])),
            ],
            "ingest": ["ingest", ingest_file(data), "-n", name],
            "trace": ["trace", text],
        }[verb]
        piped = text.encode("utf-8", "surrogatepass") if verb == "stdin" else None
        done = runner.invoke(app, [*args, *where], input=piped)
        if done.exception is not None and not isinstance(done.exception, SystemExit):
            raise AssertionError(f"{args!r} raised {done.exception!r}")
        assert done.exit_code in (0, 2), (args, done.exit_code, done.output[-500:])
        assert "Traceback" not in done.output, (args, done.output[-2000:])
        return f"{verb}:{'ok' if done.exit_code == 0 else 'refused'}"

    items = RippleGraphStore(store)
    outcomes = attack(Victim(store), request, lambda: nothing_left_logged(items))
    assert outcomes["add:ok"] and outcomes["add:refused"] and outcomes["ask:ok"]


# --- over HTTP: MCP, the memory browser, the served graphs ----------------------------------


def sendable(value: object) -> object:
    """``value`` with each lone surrogate replaced: a client's JSON encoder sends none."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    if isinstance(value, dict):
        return {sendable(k): sendable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [sendable(v) for v in value]
    return value


def no_traceback_logged(log: Path) -> None:
    text = log.read_text(errors="replace")
    assert "Traceback" not in text, text[-3000:]


def test_mcp_over_http(tmp_path: Path) -> None:
    store = tmp_path / "store"
    Memory(store).add("Mallory likes tea.", user_id=ATTACKER)
    port = free_port()
    args = ["mcp", "-n", ATTACKER, "--store", str(store), "--transport", "streamable-http",
            "--port", str(port)]  # fmt: skip
    log = tmp_path / "mcp.log"
    items = RippleGraphStore(store)
    tools = st.sampled_from(["recall", "remember", "forget", "recall", "remember", "nothing"])
    arguments = st.dictionaries(
        st.sampled_from(["query", "limit", "text", "memory_id", "namespace", "x"]),
        st.one_of(texts, numbers, anything),
        max_size=3,
    )

    async def calls(victim: Victim) -> Counter[str]:
        from mcp import Client

        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            loop = asyncio.get_running_loop()

            def request(data: st.DataObject) -> str:
                tool, given_args = data.draw(tools), sendable(data.draw(arguments))
                answer = asyncio.run_coroutine_threadsafe(
                    client.call_tool(tool, given_args), loop
                ).result(timeout=120)
                said = answer.content[0].text if answer.content else ""
                assert "Traceback" not in said and said.strip() != f"Error executing tool {tool}"
                return f"{tool}:{'refused' if answer.is_error else 'ok'}"

            return await asyncio.to_thread(
                attack, victim, request, lambda: nothing_left_logged(items)
            )

    with serving(args, f"http://127.0.0.1:{port}", log, page=False):
        outcomes = asyncio.run(calls(Victim(store)))
    no_traceback_logged(log)
    assert outcomes["remember:ok"] and outcomes["remember:refused"] and outcomes["recall:ok"]


BROWSER_FIELDS = {
    "/": ["page"],
    "/namespace": ["ns", "kind", "person", "page", "done", "speaker", "session", "since", "until"],
    "/memory": ["ns", "id"],
    "/person": ["ns", "name"],
    "/ask": ["ns", "q"],
    "/forget": ["ns", "id", "csrf"],
    "/add": ["ns", "text", "speaker", "session", "date", "csrf"],
    "/export": ["ns"],
    "/login": ["token"],
    "/static/trace.css": [],
}
BROWSER_POSTS = {"/forget", "/add", "/login"}


def test_the_memory_browser(tmp_path: Path) -> None:
    store = tmp_path / "store"
    Memory(store).add("Mallory likes tea.", user_id=ATTACKER)
    Memory(store).add("Alice keeps bees.", user_id=VICTIM)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "ui.log"
    items = RippleGraphStore(store)
    with serving(["ui", "--store", str(store), "--port", str(port)], url, log) as served:
        client = httpx.Client(base_url=served, timeout=120)
        page = client.get(f"/namespace?ns={ATTACKER}").text
        token = re.findall(r'name="csrf" value="([^"]+)"', page)[0]

        drawn = {
            "ns": names,
            "csrf": mostly(st.just(token), texts),
            "date": dates,
            "since": dates,
            "until": dates,
        }

        def field(name: str, data: st.DataObject) -> str:
            value = data.draw(drawn.get(name, texts))
            return "" if value is None else str(sendable(str(value)))

        def request(data: st.DataObject) -> str:
            path = data.draw(st.sampled_from(sorted(BROWSER_FIELDS)))
            names_sent = [n for n in BROWSER_FIELDS[path] if data.draw(st.integers(0, 9)) < 8]
            fields = {name: field(name, data) for name in names_sent}
            if path in BROWSER_POSTS and data.draw(st.integers(0, 9)) < 8:
                answer = client.post(path, data=fields)
            else:  # a URL holds a few thousand characters: the long ones go by POST
                answer = client.get(path, params={k: v[:4_000] for k, v in fields.items()})
            assert answer.status_code < 500, (path, fields, answer.text[:300])
            assert "Traceback" not in answer.text
            return f"{path}:{answer.status_code}"

        try:
            outcomes = attack(Victim(store), request, lambda: nothing_left_logged(items))
        finally:
            client.close()
    no_traceback_logged(log)
    assert outcomes["/add:303"] and outcomes["/add:400"]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, dict[str, str], Path]]:
    """``langgraph dev`` with authentication over a store; its URL, tokens and store."""
    users = tmp_path / "users.json"
    tokens = {name: auth.add_user(users, name) for name in (ATTACKER, VICTIM)}
    env = {"RIPPLEGRAPH_STORE": str(tmp_path / "store"), "RIPPLEGRAPH_USERS": str(users)}
    with langgraph_dev("langgraph.served.json", env, tmp_path / "server.log") as url:
        yield url, tokens, tmp_path / "store"
    with langgraph_dev("langgraph.served.json", env, tmp_path / "again.log") as url:
        alice = get_sync_client(url=url, headers={"Authorization": f"Bearer {tokens[VICTIM]}"})
        found = alice.store.search_items([VICTIM], query="Which bees are in hive number 1?")
        assert "hive-1" in [item["key"] for item in found["items"]], "served again, she recalls"


RUN_ERRORS = re.compile(
    r"(ValidationError|ValueError|InvalidValueError|InvalidNamespace|IngestFileError): "
    r"|.*MESSAGE_COERCION_FAILURE",
    re.DOTALL,
)
"""What a run with bad input may end in: its input or context refused, in words.  LangGraph
refuses messages in its reducer before the graph's schema sees them: ``messages: None`` is a
``ValueError``, ``messages: False`` LangChain's ``MESSAGE_COERCION_FAILURE``."""


def test_the_served_graphs(served: tuple[str, dict[str, str], Path]) -> None:
    url, tokens, store = served
    mallory = get_sync_client(url=url, headers={"Authorization": f"Bearer {tokens[ATTACKER]}"})
    mallory.store.put_item([ATTACKER], "k1", {"text": "Mallory likes tea."})
    items = RippleGraphStore(store)
    labels = st.lists(texts, max_size=2).map(lambda rest: [ATTACKER, *rest])
    inputs = {
        "recall": st.fixed_dictionaries({"query": queries, "namespace": names | anything}),
        "chat": st.fixed_dictionaries({"messages": messages}),
        "ingest": st.fixed_dictionaries(
            {
                "namespace": names | anything,
                "sessions": st.lists(
                    st.dictionaries(st.sampled_from(["id", "turns", "date"]), anything), max_size=2
                ),
            }
        ),
    }

    def request(data: st.DataObject) -> str:
        verb = data.draw(
            st.sampled_from(["put"] * 6 + ["get", "search", "search", "delete", "list", "run"])
        )
        where = data.draw(labels)

        def call() -> object:
            if verb == "put":
                ttl = data.draw(ttls)
                return mallory.store.put_item(
                    where, key=str(data.draw(keys)), value=data.draw(values),
                    ttl=ttl if isinstance(ttl, int | float) and ttl == ttl and abs(ttl) < 1e300
                    else None,
                )  # fmt: skip
            if verb == "get":
                return mallory.store.get_item(where, key=str(data.draw(keys)))
            if verb == "search":
                return mallory.store.search_items(
                    where, query=data.draw(st.none() | queries), limit=data.draw(numbers),
                    filter=data.draw(st.none() | st.dictionaries(st.text(max_size=3), anything)),
                )  # fmt: skip
            if verb == "delete":
                return mallory.store.delete_item(where, key=str(data.draw(keys)))
            if verb == "list":
                return mallory.store.list_namespaces(prefix=where, limit=data.draw(numbers))
            graph = data.draw(st.sampled_from(sorted(inputs)))
            context = data.draw(st.dictionaries(st.sampled_from(["namespace", "x"]), anything))
            return mallory.runs.wait(None, graph, input=data.draw(inputs[graph]), context=context)

        try:
            call()
        except httpx.HTTPStatusError as error:
            assert error.response.status_code < 500, (verb, error.response.text[:300])
            assert "Traceback" not in error.response.text
            return f"{verb}:{error.response.status_code}"
        except (TypeError, ValueError, httpx.InvalidURL) as error:  # the client cannot send it
            return f"{verb}:unsent:{type(error).__name__}"
        except Exception as error:  # a run that ended in an error: its input was refused
            said = str(error)
            assert verb == "run" and RUN_ERRORS.match(said), (verb, said[:500])
            return "run:refused"
        return f"{verb}:ok"

    alice = get_sync_client(url=url, headers={"Authorization": f"Bearer {tokens[VICTIM]}"})
    said = Counter[str]()

    def through_the_server() -> None:
        said["puts"] += 1
        key = f"note-{said['puts']}"
        alice.store.put_item([VICTIM], key, {"text": f"Alice's note number {said['puts']}."})
        found = alice.store.search_items([VICTIM], query=f"note number {said['puts']}?")
        assert key in [item["key"] for item in found["items"]]

    outcomes = attack(
        Victim(store), request, lambda: nothing_left_logged(items), through_the_server
    )
    assert outcomes["put:ok"] and outcomes["put:400"] and outcomes["run:ok"]
