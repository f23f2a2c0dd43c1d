"""The only place nodes are wired into graphs.

Each graph is exported as a builder and as a checkpointer-free compiled graph; the LangGraph
server supplies its own checkpointer, tests and the CLI attach one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from ripplegraph.agent.context import Context
from ripplegraph.agent.routing import after_sufficiency
from ripplegraph.agent.state import (
    ChatInput,
    ChatOutput,
    ChatState,
    IngestInput,
    IngestOutput,
    IngestState,
    RecallInput,
    RecallOutput,
    RecallState,
)
from ripplegraph.nodes.assemble_evidence import assemble_evidence
from ripplegraph.nodes.check_sufficiency import check_sufficiency
from ripplegraph.nodes.consolidate_roots import consolidate_roots
from ripplegraph.nodes.expand_locally import expand_locally
from ripplegraph.nodes.extract_memories import extract_memories
from ripplegraph.nodes.first_hop_recall import first_hop_recall
from ripplegraph.nodes.link_causes import link_causes
from ripplegraph.nodes.link_memories import link_memories
from ripplegraph.nodes.plan_recollection import plan_recollection
from ripplegraph.nodes.prepare_memories import prepare_memories
from ripplegraph.nodes.prepare_query import prepare_query
from ripplegraph.nodes.refine_counterfactually import refine_counterfactually
from ripplegraph.nodes.respond import respond
from ripplegraph.nodes.route_root_memories import route_root_memories
from ripplegraph.nodes.write_memories import write_memories


def build_ingest_graph() -> StateGraph[IngestState, Context, IngestInput, IngestOutput]:
    """The write path: extract → write → link → causal links → root consolidation."""
    builder = StateGraph(
        IngestState, context_schema=Context, input_schema=IngestInput, output_schema=IngestOutput
    )
    builder.add_node("extract_memories", extract_memories)
    builder.add_node("write_memories", write_memories)
    builder.add_node("link_memories", link_memories)
    builder.add_node("link_causes", link_causes)
    builder.add_node("consolidate_roots", consolidate_roots)
    builder.add_edge(START, "extract_memories")
    builder.add_edge("extract_memories", "write_memories")
    builder.add_edge("write_memories", "link_memories")
    builder.add_edge("link_memories", "link_causes")
    builder.add_edge("link_causes", "consolidate_roots")
    builder.add_edge("consolidate_roots", END)
    return builder


RECALL_NODES: Mapping[str, Callable[..., dict[str, Any]]] = MappingProxyType(
    {
        "first_hop_recall": first_hop_recall,
        "route_root_memories": route_root_memories,
        "check_sufficiency": check_sufficiency,
        "plan_recollection": plan_recollection,
        "expand_locally": expand_locally,
        "refine_counterfactually": refine_counterfactually,
        "assemble_evidence": assemble_evidence,
    }
)
"""The recall graph's nodes by name, in the order they are added."""


def build_recall_graph(
    nodes: Mapping[str, Callable[..., dict[str, Any]]] = RECALL_NODES,
) -> StateGraph[RecallState, Context, RecallInput, RecallOutput]:
    """The recall state machine (DESIGN §2.1).

    ``nodes`` names a function for each node of ``RECALL_NODES``: the same wiring runs other
    functions (``bench scale`` replays recorded outputs through it to time LangGraph alone).
    """
    if set(nodes) != set(RECALL_NODES):
        raise ValueError(f"the recall graph's nodes are {sorted(RECALL_NODES)}")
    builder = StateGraph(
        RecallState, context_schema=Context, input_schema=RecallInput, output_schema=RecallOutput
    )
    for name in RECALL_NODES:
        builder.add_node(name, nodes[name])
    builder.add_edge(START, "first_hop_recall")
    builder.add_edge("first_hop_recall", "route_root_memories")
    builder.add_edge("route_root_memories", "check_sufficiency")
    builder.add_conditional_edges("check_sufficiency", after_sufficiency)
    builder.add_edge("plan_recollection", "expand_locally")
    builder.add_edge("expand_locally", "check_sufficiency")
    builder.add_edge("refine_counterfactually", "check_sufficiency")
    builder.add_edge("assemble_evidence", END)
    return builder


ingest_graph: CompiledStateGraph[IngestState, Context, IngestInput, IngestOutput] = (
    build_ingest_graph().compile(name="ingest")
)
recall_graph: CompiledStateGraph[RecallState, Context, RecallInput, RecallOutput] = (
    build_recall_graph().compile(name="recall")
)


def build_chat_graph() -> StateGraph[ChatState, Context, ChatInput, ChatOutput]:
    """The chat agent: recall → respond → remember, with recall and ingest as subgraphs."""
    builder = StateGraph(
        ChatState, context_schema=Context, input_schema=ChatInput, output_schema=ChatOutput
    )
    builder.add_node("prepare_query", prepare_query)
    builder.add_node("recall", recall_graph)
    builder.add_node("respond", respond)
    builder.add_node("prepare_memories", prepare_memories)
    builder.add_node("remember", ingest_graph)
    builder.add_edge(START, "prepare_query")
    builder.add_edge("prepare_query", "recall")
    builder.add_edge("recall", "respond")
    builder.add_edge("respond", "prepare_memories")
    builder.add_edge("prepare_memories", "remember")
    builder.add_edge("remember", END)
    return builder


chat_graph: CompiledStateGraph[ChatState, Context, ChatInput, ChatOutput] = (
    build_chat_graph().compile(name="chat")
)
