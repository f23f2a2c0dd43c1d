"""Pattern (a): the compiled recall graph added directly as a node of a parent graph.

The parent's state shares the recall graph's keys (``query``, ``namespace`` in; ``context``,
``evidence``, ``stop_reason`` out), and its context type is its own: the recall nodes take
the run choices they share by name (here the ``recall`` limits) and default the rest.  Where the
memories live is the process's deployment (``RIPPLEGRAPH_STORE`` and friends), never a
field of the parent's context.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from ripplegraph.agent.context import RecallLimits
from ripplegraph.agent.graph import recall_graph
from ripplegraph.agent.state import Evidence


@dataclass
class AssistantContext:
    """The parent agent's own configuration."""

    recall: RecallLimits = field(default_factory=RecallLimits)
    persona: str = "concise"


class AssistantState(TypedDict, total=False):
    """Shares ``query``/``namespace``/``context``/``evidence``/``stop_reason`` with recall."""

    query: str
    namespace: str
    context: str
    evidence: list[Evidence]
    stop_reason: str
    draft: str


def draft_reply(state: AssistantState) -> dict[str, str]:
    """Stand-in for the parent's own LLM step: it just shows what memory handed over."""
    evidence = state.get("evidence", [])
    return {"draft": f"{len(evidence)} memories recalled ({state.get('stop_reason')})."}


def build() -> CompiledStateGraph[AssistantState, AssistantContext, AssistantState, AssistantState]:
    """START → recall (the compiled subgraph itself) → draft_reply → END."""
    builder = StateGraph(AssistantState, context_schema=AssistantContext)
    builder.add_node("recall", recall_graph)
    builder.add_node("draft_reply", draft_reply)
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "draft_reply")
    builder.add_edge("draft_reply", END)
    return builder.compile(name="assistant_direct")
