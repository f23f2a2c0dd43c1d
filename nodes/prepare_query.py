"""Chat node: the latest user message becomes the recall subgraph's query."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from ripplegraph.agent.context import Context, resolve_context
from ripplegraph.agent.memory import MAX_QUERY_CHARS
from ripplegraph.agent.memory.items import namespace_named
from ripplegraph.agent.services import scope
from ripplegraph.agent.state import ChatState, TraceEvent
from ripplegraph.agent.tracing import record


def prepare_query(state: ChatState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Map the chat state into the recall graph's input keys (fresh cues every turn)."""
    run = scope(runtime, namespace_named(resolve_context(runtime.context).namespace))
    question = next(
        (m.text for m in reversed(state.messages) if isinstance(m, HumanMessage)), ""
    ).strip()
    clamped = question[:MAX_QUERY_CHARS]
    note = (
        f" (first {MAX_QUERY_CHARS:,} of {len(question):,} characters)"
        if clamped != question
        else ""
    )
    return {
        "query": clamped or "(empty message)",
        "namespace": run.namespace,
        "cues": None,
        "stop_reason": "",
        "trace": record(
            runtime,
            TraceEvent(
                node="prepare_query",
                decision="query",
                reason=f"latest user message{note}, namespace {run.namespace}",
            ),
        ),
    }
