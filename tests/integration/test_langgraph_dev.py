"""`langgraph dev` on loopback, driven by the real `langgraph-sdk` client."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client

from ripplegraph.agent.context import DEPLOYMENT_FIELDS, Deployed
from ripplegraph.agent.graph import recall_graph
from ripplegraph.studio import DEMO_NAMESPACE
from tests.langgraph_server import langgraph_dev
from tests.openai_server import Reply, ScriptedOpenAI

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
HARBOR = "Should we go to Harbor Grill for Maya's birthday dinner?"
CANARY = "sk-canary-0c7d2e"


@pytest.fixture(scope="module")
def server(demo_context: Deployed, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = {
        "RIPPLEGRAPH_STORE": demo_context.deployment.store_dir,
        "RIPPLEGRAPH_CHROMA_URL": demo_context.deployment.chroma_url or "",
        "RIPPLEGRAPH_DATABASE_URL": demo_context.deployment.database_url or "",
        "OPENAI_API_KEY": CANARY,
    }
    log = tmp_path_factory.mktemp("langgraph") / "server.log"
    with langgraph_dev("langgraph.json", env, log) as url:
        yield url


def test_serves_the_three_graphs_with_the_typed_context(server: str) -> None:
    client = get_sync_client(url=server)
    graphs = {a["graph_id"]: a for a in client.assistants.search()}
    assert set(graphs) >= {"chat", "recall", "ingest"}
    schema = client.assistants.get_schemas(graphs["recall"]["assistant_id"])["context_schema"]
    fields = schema["properties"]
    assert {"namespace", "recall", "llm_budget", "ingest_budget"} <= set(fields)
    assert not DEPLOYMENT_FIELDS & set(fields), "infrastructure is the server's, not a run's"
    assert all(field.get("description") for field in fields.values())


def test_chat_streams_every_recall_step_in_graph_order(server: str) -> None:
    client = get_sync_client(url=server)
    thread = client.threads.create()
    custom: list[dict] = []
    updates: list[str] = []
    replies: list[str] = []
    for part in client.runs.stream(
        thread["thread_id"],
        "chat",
        input={"messages": [{"role": "user", "content": HARBOR}]},
        stream_mode=["updates", "custom"],
        stream_subgraphs=True,
        context={"namespace": DEMO_NAMESPACE, "user_name": "Alex"},
    ):
        in_recall = "|recall:" in part.event
        if part.event.startswith("custom") and in_recall:
            custom.append(part.data)
        elif part.event.startswith("updates") and in_recall:
            updates.extend(part.data.keys())
        elif part.event == "updates" and "respond" in part.data:
            replies += [m["content"] for m in part.data["respond"]["messages"]]
    steps = [event["node"] for event in custom]
    assert steps == updates, "a custom event per node update, as each happens"
    assert steps[0] == "first_hop_recall" and steps[-1] == "assemble_evidence"
    assert "refine_counterfactually" in steps
    edges = {(e.source, e.target) for e in recall_graph.get_graph().edges}
    assert all(pair in edges for pair in itertools.pairwise(steps))
    assert all(event["decision"] and event["reason"] for event in custom)
    assert replies and "allergic to seafood" in replies[-1]
    history = client.threads.get_history(thread["thread_id"])
    assert len(history) >= 5
    assert history[0]["values"]["messages"][-1]["type"] == "ai"


def test_a_run_cannot_redirect_the_key_or_open_a_store(server: str, tmp_path: Path) -> None:
    """Plain local serving (no auth): a run's context still cannot reach infrastructure."""
    listener = ScriptedOpenAI(lambda request: Reply(status=400, error="not scripted"))
    elsewhere = tmp_path / "elsewhere"
    try:
        out = get_sync_client(url=server).runs.wait(
            None,
            "recall",
            input={"query": HARBOR, "namespace": DEMO_NAMESPACE},
            context={
                "model": "gpt-4.1-mini",
                "base_url": listener.url,
                "store_dir": str(elsewhere),
                "recall": {"rounds": 0},
            },
        )
        assert isinstance(out, dict) and "allergic to seafood" in out["context"]
        assert out["budget"]["limits"]["rounds"] == 0, "the run's own choices still apply"
        assert listener.requests == [], "the server's key went to a client's endpoint"
        assert not elsewhere.exists()
    finally:
        listener.close()


def test_the_servers_store_is_ripplegraph(server: str) -> None:
    """``"store"`` in langgraph.json: the SDK's store calls put, recall and forget memories."""
    store = get_sync_client(url=server).store
    hits = store.search_items((DEMO_NAMESPACE,), query=HARBOR, limit=10)["items"]
    assert any("allergic to seafood" in hit["value"]["recall"]["memory"] for hit in hits)
    namespace = ("sdk", "maya")
    store.put_item(namespace, "allergy", {"text": "I'm allergic to shellfish.", "speaker": "Maya"})
    store.put_item(namespace, "hobby", {"text": "I play padel on Sundays.", "speaker": "Maya"})
    hits = store.search_items(namespace, query="Book the oyster bar for Maya?", limit=1)["items"]
    assert [hit["key"] for hit in hits] == ["allergy"]
    assert hits[0]["value"]["text"] == "I'm allergic to shellfish." and isinstance(
        hits[0]["score"], float
    )
    assert list(map(tuple, store.list_namespaces(prefix=("sdk",))["namespaces"])) == [namespace]
    store.delete_item(namespace, "allergy")
    assert [hit["key"] for hit in store.search_items(namespace)["items"]] == ["hobby"]
    store.put_item(
        namespace, "trip", {"text": "I'm in Porto until Friday.", "speaker": "Maya"}, ttl=60
    )
    trip = store.get_item(namespace, "trip")
    assert trip is not None and trip["value"]["speaker"] == "Maya"  # a TTL is taken
