"""RippleGraphStore as LangGraph's BaseStore: the contract's cases, recall through it, forget.

The namespace and validation cases follow LangGraph's own store test-suite (those that apply
to a store without a configurable index); the rest are what RippleGraph adds: a put
turn or conversation is remembered, a search with a query is a recall, a delete forgets.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI
from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import GetOp, InvalidNamespaceError, PutOp, SearchOp, TTLConfig
from langmem import create_manage_memory_tool, create_search_memory_tool
from pydantic import SecretStr
from typing_extensions import TypedDict

from ripplegraph.agent.context import Deployed
from ripplegraph.agent.errors import InvalidValueError
from ripplegraph.agent.store.sql.schema import META, SQLITE, statements
from ripplegraph.agent.store.transfer import export_namespace, import_namespace
from ripplegraph.agent.surfaces.langgraph_store import RippleGraphStore
from ripplegraph.studio import demo_sessions
from tests.conftest import deployed
from tests.integration.test_forget_bytes import found, store_bytes
from tests.openai_server import Reply, Request, ScriptedOpenAI

pytestmark = pytest.mark.integration

HARBOR = "Should we go to Harbor Grill for Maya's birthday dinner?"
USER = ("users", "alex")


@pytest.fixture
def store(tmp_path: Path) -> RippleGraphStore:
    return RippleGraphStore(tmp_path / "store")


def put_demo(store: RippleGraphStore) -> None:
    """The demo history, one conversation item per session."""
    for session in demo_sessions():
        messages = [{"role": "user", "name": t.speaker, "content": t.text} for t in session.turns]
        value = {"messages": messages, "date": session.date.isoformat(), "session": session.id}
        store.put(USER, session.id, value)


def test_list_namespaces_by_prefix_suffix_wildcard_depth_and_page(store: RippleGraphStore) -> None:
    namespaces = [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
        ("users", "123"),
        ("users", "456", "settings"),
        ("admin", "users", "789"),
    ]
    for i, ns in enumerate(namespaces):
        store.put(ns, f"id_{i}", {"data": f"value_{i:02d}"})
    assert store.list_namespaces(prefix=("a", "b")) == namespaces[:4]
    assert store.list_namespaces(suffix=("f",)) == [
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
    ]
    assert store.list_namespaces(prefix=("a",), suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(prefix=("a", "b"), limit=2) == namespaces[:2]
    assert store.list_namespaces(prefix=("a", "b"), offset=2) == namespaces[2:4]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(suffix=("*", "f")) == [
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
    ]
    assert store.list_namespaces(prefix=("nonexistent",)) == []
    assert store.list_namespaces(prefix=("users", "123")) == [("users", "123")]
    assert store.list_namespaces(max_depth=1) == [("a",), ("admin",), ("b",), ("users",)]
    assert len(store.list_namespaces()) == len(namespaces)


def test_invalid_namespaces_are_refused_before_anything_is_written(
    store: RippleGraphStore,
) -> None:
    doc = {"foo": "bar"}
    for namespace in [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(namespace, "foo", doc)
        with pytest.raises(InvalidNamespaceError):
            asyncio.run(store.aput(namespace, "foo", doc))
    assert store.list_namespaces() == []
    store.put(("foo", "langgraph", "foo"), "bar", doc)
    assert store.get(("foo", "langgraph", "foo"), "bar").value == doc  # type: ignore[union-attr]
    store.batch([PutOp(("langgraph", "foo"), "bar", doc)])  # past the public API, as LangGraph's
    assert store.search(("langgraph", "foo"))[0].value == doc
    store.delete(("langgraph", "foo"), "bar")
    assert store.get(("langgraph", "foo"), "bar") is None


def test_put_get_update_delete_keep_the_value_as_given(store: RippleGraphStore) -> None:
    profile = {"kind": "profile", "age": 31, "tags": ["a", "b"]}
    store.put(USER, "profile", profile)
    store.put(USER, "note", {"text": "I started learning the cello.", "speaker": "Alex"})
    first = store.get(USER, "profile")
    assert first is not None and first.value == profile and first.namespace == USER
    store.put(USER, "profile", {**profile, "age": 32})
    second = store.get(USER, "profile")
    assert second is not None and second.value["age"] == 32
    assert second.created_at == first.created_at < second.updated_at
    store.put(USER, "note", {"text": "I gave up the cello.", "speaker": "Alex"})
    units = store.memory.all_units("users/alex")
    assert [u.text for u in units] == ["Alex: I gave up the cello."]  # the old turn is forgotten
    store.delete(USER, "profile")
    store.delete(USER, "missing")  # deleting what is not there is no error
    assert store.get(USER, "profile") is None
    assert [i.key for i in store.search(USER)] == ["note"]


def test_search_without_a_query_lists_filters_and_pages(store: RippleGraphStore) -> None:
    for i in range(5):
        store.put(("docs",), f"d{i}", {"n": i, "parity": "even" if i % 2 == 0 else "odd"})
    assert [i.key for i in store.search(("docs",))] == ["d0", "d1", "d2", "d3", "d4"]
    assert [i.key for i in store.search(("docs",), filter={"parity": "even"})] == ["d0", "d2", "d4"]
    assert [i.key for i in store.search(("docs",), filter={"n": {"$gte": 3}})] == ["d3", "d4"]
    assert [i.key for i in store.search(("docs",), limit=2, offset=1)] == ["d1", "d2"]
    assert store.search(("nothing",)) == []


def test_memories_ingested_elsewhere_are_items_under_their_ids(tmp_path: Path) -> None:
    context = deployed(store_dir=str(tmp_path / "store"))
    from ripplegraph.agent.surfaces.api import remember

    remember(demo_sessions()[:2], "alex", context)
    store = RippleGraphStore(deployment=context.deployment)
    listed = store.search(("alex",), limit=100)
    assert len(listed) == len(store.memory.all_units("alex"))
    item = store.get(("alex",), listed[0].key)
    assert item is not None and item.value["session"] == demo_sessions()[0].id
    store.delete(("alex",), listed[0].key)
    assert store.get(("alex",), listed[0].key) is None


@pytest.mark.parametrize("fresh_context", ["embedded", "postgres+chroma-server"], indirect=True)
def test_the_harbor_grill_question_finds_the_allergy_and_delete_forgets_it(
    fresh_context: Deployed,
) -> None:
    store = RippleGraphStore(deployment=fresh_context.deployment)
    put_demo(store)
    results = store.search(USER, query=HARBOR, limit=5)
    keys = [r.key for r in results]
    assert "demo-2024-05-01" in keys, keys
    allergy = results[keys.index("demo-2024-05-01")]
    assert "allergic to seafood" in allergy.value["recall"]["memory"]
    assert allergy.value["recall"]["reached_by"], "how the memory was reached"
    assert allergy.score is not None and allergy.score > 0
    assert allergy.value["messages"][0]["name"] == "Alex"  # the value as put, with the recall

    store.delete(USER, "demo-2024-05-01")
    assert store.get(USER, "demo-2024-05-01") is None
    after = store.search(USER, query=HARBOR, limit=10)
    assert all("allergic" not in r.value["recall"]["memory"] for r in after)
    if not fresh_context.deployment.chroma_url and not fresh_context.deployment.database_url:
        files = store_bytes(fresh_context)
        assert found(files, [b"allergic to seafood", b"her throat swelled"]) == []


def test_batch_answers_in_order_and_abatch_agrees(store: RippleGraphStore) -> None:
    doc = {"text": "I moved to Lisbon in March.", "speaker": "Alex"}
    ops = [
        PutOp(USER, "k", doc),
        GetOp(USER, "k"),
        SearchOp(USER, query="Where does Alex live?", limit=1),
        GetOp(USER, "absent"),
    ]
    put, got, searched, absent = store.batch(ops)
    assert put is None and absent is None
    assert got.value == doc  # type: ignore[union-attr]
    assert [i.key for i in searched] == ["k"]  # type: ignore[union-attr]

    async def concurrently() -> list[Any]:
        return await asyncio.gather(
            store.aget(USER, "k"), store.asearch(USER, query="Lisbon"), store.alist_namespaces()
        )

    item, hits, namespaces = asyncio.run(concurrently())
    assert item.value == doc and hits[0].key == "k" and namespaces == [USER]


class Question(TypedDict):
    question: str
    evidence: list[str]


def test_a_graph_compiled_with_the_store_recalls_through_runtime_store(
    store: RippleGraphStore,
) -> None:
    put_demo(store)

    def look_up(state: Question, runtime: Runtime[None]) -> dict[str, Any]:
        assert runtime.store is not None
        found = runtime.store.search(USER, query=state["question"], limit=5)
        return {"evidence": [item.value["recall"]["memory"] for item in found]}

    builder = StateGraph(Question)
    builder.add_node("look_up", look_up)
    builder.add_edge(START, "look_up")
    graph = builder.compile(store=store)
    result = graph.invoke({"question": HARBOR, "evidence": []})
    assert any("allergic to seafood" in text for text in result["evidence"])


def test_langmem_tools_remember_recall_and_delete_through_an_agent(
    store: RippleGraphStore,
    serve: Callable[[Callable[[Request], Reply]], ScriptedOpenAI],
) -> None:
    """LangMem's manage and search tools on RippleGraphStore, inside ``create_agent``."""
    namespace = ("memories", "maya")
    plan: list[Reply] = [
        Reply(tool_calls=[("manage_memory", {"content": "Maya is allergic to shellfish."})]),
        Reply(content="Noted."),
        Reply(tool_calls=[("search_memory", {"query": "Harbor Grill for Maya's birthday"})]),
        Reply(content="Not Harbor Grill: Maya is allergic to shellfish."),
    ]
    server = serve(lambda request: plan.pop(0))
    model = ChatOpenAI(model="scripted", base_url=server.url, api_key=SecretStr("k"))
    agent = create_agent(
        model,
        [create_manage_memory_tool(namespace), create_search_memory_tool(namespace)],
        store=store,
    )
    agent.invoke({"messages": [HumanMessage("Remember: I'm allergic to shellfish.")]})
    (item,) = store.search(namespace)
    assert item.value == {"content": "Maya is allergic to shellfish."}
    assert store.memory.all_units("memories/maya")[0].text.endswith("allergic to shellfish.")

    out = agent.invoke({"messages": [HumanMessage(HARBOR)]})
    found = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    hits = json.loads(str(found.content))
    assert hits[0]["key"] == item.key and hits[0]["value"]["content"] == item.value["content"]
    assert hits[0]["value"]["recall"]["reached_by"]
    assert out["messages"][-1].content.startswith("Not Harbor Grill")

    plan[:] = [
        Reply(tool_calls=[("manage_memory", {"action": "delete", "id": item.key})]),
        Reply(content="Forgotten."),
    ]
    agent.invoke({"messages": [HumanMessage("Forget my allergy.")]})
    assert store.get(namespace, item.key) is None
    assert store.memory.all_units("memories/maya") == []


LISBON = {"text": "I moved to Lisbon in March.", "speaker": "Alex"}


@pytest.mark.parametrize("fresh_context", ["embedded", "postgres"], indirect=True)
def test_an_item_lives_its_ttl_refreshed_by_reads_then_is_forgotten(
    fresh_context: Deployed,
) -> None:
    store = RippleGraphStore(deployment=fresh_context.deployment, ttl={"refresh_on_read": True})
    store.put(USER, "home", LISBON, ttl=0.05)  # 3 s
    store.put(USER, "pet", {"text": "We adopted a cat called Miso.", "speaker": "Alex"})
    time.sleep(2)
    assert store.get(USER, "home") is not None  # refreshes: 3 s from now
    time.sleep(2)  # past the put's 3 s, within the refreshed ones
    assert store.get(USER, "home", refresh_ttl=False) is not None
    recalled = store.search(USER, query="Where does Alex live?", refresh_ttl=False)
    assert "home" in [i.key for i in recalled]
    time.sleep(1.5)
    assert store.get(USER, "home") is None
    assert [i.key for i in store.search(USER)] == ["pet"]
    assert [u.text for u in store.memory.all_units("users/alex")] == [
        "Alex: We adopted a cat called Miso."
    ]
    if not fresh_context.deployment.database_url:
        assert found(store_bytes(fresh_context), [b"Lisbon"]) == []


def test_the_sweeper_forgets_expired_items_without_a_call(tmp_path: Path) -> None:
    ttl: TTLConfig = {"default_ttl": 0.01, "sweep_interval_minutes": 0.01}  # 0.6 s each
    store = RippleGraphStore(tmp_path / "store", ttl=ttl)
    store.put(USER, "home", LISBON)
    done = store.start_ttl_sweeper()
    assert store.start_ttl_sweeper() is done  # one sweeper, not two
    deadline = time.monotonic() + 30
    while store.memory.all_units("users/alex") and time.monotonic() < deadline:
        time.sleep(0.2)  # all_units is not a store operation: only the sweeper forgets
    assert store.memory.all_units("users/alex") == []
    assert store.stop_ttl_sweeper(timeout=10) and done.result(timeout=1) is None
    assert store.memory.relational.expired_items(datetime.now(UTC)) == []


def test_a_ttl_survives_export_and_import_and_a_bad_one_writes_nothing(
    store: RippleGraphStore, tmp_path: Path
) -> None:
    store.put(USER, "home", LISBON, ttl=60)
    with pytest.raises(InvalidValueError, match="time to live"):
        store.put(USER, "pet", {"text": "We adopted a cat.", "speaker": "Alex"}, ttl=0)
    assert len(store.memory.all_units("users/alex")) == 1  # the refused put remembered nothing
    before = store.memory.items("users/alex")[0]
    assert before.ttl_minutes == 60 and before.expires_at is not None
    store.memory.relational.refresh_items("users/alex", ["home"], before.created_at)
    export = tmp_path / "alex.jsonl"
    export_namespace(store.memory, "users/alex", export)
    elsewhere = RippleGraphStore(tmp_path / "elsewhere")
    import_namespace(elsewhere.memory, export)
    after = elsewhere.memory.items("users/alex")[0]
    assert (after.ttl_minutes, after.expires_at) == (60, before.created_at + timedelta(hours=1))


def test_a_version_2_store_gains_ttls_in_place(tmp_path: Path) -> None:
    """A store written before items had a time to live opens, keeps its items, takes TTLs."""
    (tmp_path / "store").mkdir()
    with sqlite3.connect(tmp_path / "store" / "graph.sqlite") as db:
        db.execute(META)
        for migration in (1, 2):
            for statement in statements(SQLITE, migration):
                db.execute(statement)
        db.execute("INSERT INTO meta VALUES ('schema_version', '2')")
        db.execute(
            "INSERT INTO items VALUES ('users/alex', 'profile', '{\"age\": 31}', "
            "'2026-01-01T00:00:00+00:00', '2026-01-01T00:00:00+00:00')"
        )
    store = RippleGraphStore(tmp_path / "store")
    item = store.get(USER, "profile")
    assert item is not None and item.value == {"age": 31}
    store.put(USER, "profile", {"age": 32}, ttl=60)
    assert store.memory.items("users/alex")[0].ttl_minutes == 60
