"""Pattern (b): a wrapper node maps the parent's state into the recall graph and back.

Use it when the parent's keys differ (here: ``messages`` and ``user_id``) or when the parent
must choose the recall context itself: where memories live through a ``Deployment`` built in
the application's own code (a run's context can never name a store), and the namespace and
budgets per run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from ripplegraph.agent.context import Deployment
from ripplegraph.agent.graph import recall_graph
from ripplegraph.agent.state import RecallInput, RecallOutput


@dataclass
class SupportContext:
    """The parent agent's own per-run configuration: how much recall may do."""

    recall_rounds: int = 1


class SupportState(TypedDict, total=False):
    """The parent's keys, none shared with the recall graph."""

    messages: Annotated[list[AnyMessage], add_messages]
    user_id: str
    memory_context: str
    memory_ids: list[str]


def build(
    memory: Deployment | None = None,
) -> CompiledStateGraph[SupportState, SupportContext, SupportState, SupportState]:
    """START → recall_for_user (wraps the recall graph) → END, over ``memory``'s store."""
    deployment = memory or Deployment()

    def recall_for_user(state: SupportState, runtime: Runtime[SupportContext]) -> dict[str, Any]:
        """Last message → recall query in the user's namespace; evidence → parent state."""
        question = state["messages"][-1].text
        context = deployment.bind(recall={"rounds": runtime.context.recall_rounds})
        raw = recall_graph.invoke(
            RecallInput(query=question, namespace=state["user_id"]), context=context
        )
        result = RecallOutput.model_validate(raw)
        return {
            "memory_context": result.context,
            "memory_ids": [e.memory.id for e in result.evidence],
        }

    builder = StateGraph(SupportState, context_schema=SupportContext)
    builder.add_node("recall_for_user", recall_for_user)
    builder.add_edge(START, "recall_for_user")
    builder.add_edge("recall_for_user", END)
    return builder.compile(name="assistant_wrapper")
