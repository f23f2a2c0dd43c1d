"""The only place nodes are wired into graphs."""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from agent.context import Context
from agent.state import IngestInput, IngestOutput, IngestState
from nodes.extract_memories import extract_memories
from nodes.link_memories import link_memories
from nodes.write_memories import write_memories


def build_ingest_graph() -> StateGraph[IngestState, Context, IngestInput, IngestOutput]:
    """The write path: extract → write → link."""
    builder = StateGraph(
        IngestState, context_schema=Context, input_schema=IngestInput, output_schema=IngestOutput
    )
    builder.add_node("extract_memories", extract_memories)
    builder.add_node("write_memories", write_memories)
    builder.add_node("link_memories", link_memories)
    builder.add_edge(START, "extract_memories")
    builder.add_edge("extract_memories", "write_memories")
    builder.add_edge("write_memories", "link_memories")
    builder.add_edge("link_memories", END)
    return builder


ingest_graph: CompiledStateGraph[IngestState, Context, IngestInput, IngestOutput] = (
    build_ingest_graph().compile(name="ingest")
)
