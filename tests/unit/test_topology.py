from syrupy.assertion import SnapshotAssertion

from ripplegraph.agent.graph import chat_graph, ingest_graph, recall_graph


def test_ingest_topology(snapshot: SnapshotAssertion) -> None:
    assert ingest_graph.get_graph().draw_mermaid() == snapshot


def test_recall_topology(snapshot: SnapshotAssertion) -> None:
    assert recall_graph.get_graph().draw_mermaid() == snapshot


def test_chat_topology_shows_recall_nodes(snapshot: SnapshotAssertion) -> None:
    mermaid = chat_graph.get_graph(xray=True).draw_mermaid()
    assert "recall\\3aexpand_locally" in mermaid or "expand_locally" in mermaid
    assert mermaid == snapshot
