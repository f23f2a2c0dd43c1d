import pytest
from syrupy.assertion import SnapshotAssertion

from ripplegraph.agent.context import Context
from ripplegraph.agent.eval.scale import Tape
from ripplegraph.agent.graph import (
    RECALL_NODES,
    build_recall_graph,
    chat_graph,
    ingest_graph,
    recall_graph,
)
from ripplegraph.agent.state import QueryCues, RecallInput, RecallOutput


def test_ingest_topology(snapshot: SnapshotAssertion) -> None:
    assert ingest_graph.get_graph().draw_mermaid() == snapshot


def test_recall_topology(snapshot: SnapshotAssertion) -> None:
    assert recall_graph.get_graph().draw_mermaid() == snapshot


def test_chat_topology_shows_recall_nodes(snapshot: SnapshotAssertion) -> None:
    mermaid = chat_graph.get_graph(xray=True).draw_mermaid()
    assert "recall\\3aexpand_locally" in mermaid or "expand_locally" in mermaid
    assert mermaid == snapshot


def test_the_same_wiring_runs_other_node_functions() -> None:
    with pytest.raises(ValueError, match="recall graph's nodes"):
        build_recall_graph({"first_hop_recall": RECALL_NODES["first_hop_recall"]})
    tape = Tape()
    tape.outputs["first_hop_recall"].append({"cues": QueryCues(), "pool": {}})
    tape.outputs["route_root_memories"].append({})
    tape.outputs["check_sufficiency"] += [{"decision": "expand"}, {"decision": "stop"}]
    tape.outputs["plan_recollection"].append({})
    tape.outputs["expand_locally"].append({"rounds": 1})
    tape.outputs["assemble_evidence"].append({"evidence": [], "context": "nothing kept"})
    player = build_recall_graph({name: tape.playing(name) for name in RECALL_NODES}).compile()
    assert player.get_graph().draw_mermaid() == recall_graph.get_graph().draw_mermaid()
    out = RecallOutput.model_validate(
        player.invoke(RecallInput(query="q", namespace="n"), context=Context())
    )
    # The router read the replayed decisions: first hop, roots, check, plan, walk, check,
    # assembly; every output was handed back, in order.
    assert tape.calls == 7 and out.context == "nothing kept"
    assert not any(tape.outputs.values())
