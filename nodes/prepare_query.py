"""Chat node: the latest user message becomes the recall subgraph's query."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from agent.context import Context
from agent.state import ChatState, TraceEvent


def prepare_query(state: ChatState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Map the chat state into the recall graph's input keys (fresh cues every turn)."""
    question = next(
        (m.text for m in reversed(state.messages) if isinstance(m, HumanMessage)), ""
    ).strip()
    return {
        "query": question or "(empty message)",
        "namespace": runtime.context.namespace,
        "cues": None,
        "stop_reason": "",
        "trace": [
            TraceEvent(
                node="prepare_query",
                decision="query",
                reason=f"latest user message, namespace {runtime.context.namespace}",
            )
        ],
    }
