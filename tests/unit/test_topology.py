from syrupy.assertion import SnapshotAssertion

from agent.graph import ingest_graph


def test_ingest_topology(snapshot: SnapshotAssertion) -> None:
    assert ingest_graph.get_graph().draw_mermaid() == snapshot
