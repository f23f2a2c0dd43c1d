"""Chat node: answer from the recalled evidence (offline: extractive, constraints first)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from agent.context import Context
from agent.policies.answer import extractive_answer
from agent.state import ChatState, TraceEvent
from agent.tracing import record


def respond(state: ChatState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Reply with the evidence that bears on the question."""
    answer = extractive_answer(state.query, state.evidence)
    return {
        "messages": [AIMessage(content=answer)],
        "trace": record(
            runtime,
            TraceEvent(
                node="respond",
                decision="offline extractive answer",
                reason=f"{len(state.evidence)} evidence items; stop: {state.stop_reason}",
            ),
        ),
    }
