"""A record of another tenant planted among alice's vectors never comes back to alice.

Small namespaces share one table of vector rows (``unit_vectors``); large ones have a
collection each.  The attack plants, where alice's vectors live, a vector stored under
alice's namespace but for one of bob's memories — the vector of bob's secret, so it is the
best match for a question about it — and a vector for a memory that does not exist.  No read
path returns either to alice: the channels, the whole recall graph with its expansion, the
export, and the MCP server's recall; ``check`` reports them, and ``repair`` removes them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest
from mcp import Client

from ripplegraph.agent.context import Deployed
from ripplegraph.agent.graph import recall_graph
from ripplegraph.agent.services import Services
from ripplegraph.agent.state import RecallInput, RecallOutput
from ripplegraph.agent.store.transfer import export_namespace
from ripplegraph.agent.surfaces.langgraph_store import RippleGraphStore
from ripplegraph.agent.surfaces.mcp_server import build_server
from tests.integration.conftest import backend_context, ingest
from tests.tenants import secret, tenant_sessions

pytestmark = pytest.mark.integration
QUESTION = f"What is the locker combination {secret(1)}?"


@pytest.fixture(params=["embedded", "chroma-server"], ids=["rows", "collections"])
def planted(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Deployed, str]:
    """Alice's and bob's memories, and bob's secret planted among alice's vectors."""
    context = backend_context(request, tmp_path / "store")
    ingest(context, "alice", tenant_sessions(0))
    ingest(context, "bob", tenant_sessions(1))
    store = Services(context.deployment).store()
    bobs = next(u for u in store.all_units("bob") if secret(1) in u.text)
    vectors = np.stack(
        [store.embeddings("bob", [bobs.id])[bobs.id], store.embedder.query(QUESTION)]
    )
    if store.vectors.placement("alice") == "rows":
        store.relational.insert_vectors("alice", [bobs.id, "m_ghost"], vectors)
    else:
        store.vectors.chroma.upsert("alice", [bobs.id, "m_ghost"], vectors)
    return context, bobs.id


def test_no_read_path_returns_a_planted_record(
    planted: tuple[Deployed, str], tmp_path: Path
) -> None:
    context, bobs = planted
    store = Services(context.deployment).store()
    alices = store.unit_ids("alice")
    wanted = {bobs, "m_ghost"}

    assert not wanted & {mid for mid, _ in store.search_semantic("alice", QUESTION, 50)}
    assert store.embeddings("alice", sorted(wanted)) == {}
    raw = recall_graph.invoke(RecallInput(query=QUESTION, namespace="alice"), context=context)
    result = RecallOutput.model_validate(raw)
    assert {e.memory.id for e in result.evidence} <= alices  # expansion and refinement too
    assert secret(1) not in result.context
    assert not [t for t in result.trace if bobs in t.model_dump_json()]

    export = tmp_path / "alice.jsonl"
    export_namespace(store, "alice", export)
    assert bobs not in export.read_text() and secret(1) not in export.read_text()

    server = build_server(RippleGraphStore(deployment=context.deployment), "alice")

    async def mcp_recall() -> str:
        async with Client(server) as client:
            answer = await client.call_tool("recall", {"query": QUESTION, "limit": 30})
        return str(answer.structured_content)

    recalled = asyncio.run(mcp_recall())
    assert secret(1) not in recalled and bobs not in recalled

    report = store.check()
    assert report.leftovers["vectors without a unit"] == 2, report
    store.check(repair=True)
    assert not wanted & store.vectors.ids("alice")
    assert bobs in store.vectors.ids("bob")  # bob's own vector is untouched
