"""Chat node: answer from the recalled evidence (LLM answer role, or offline extractive)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from ripplegraph.agent.context import Context
from ripplegraph.agent.decisions.roles import reply
from ripplegraph.agent.services import scope
from ripplegraph.agent.state import ChatState, TraceEvent
from ripplegraph.agent.tracing import record
from ripplegraph.prompts import answer as answer_prompt


def respond(state: ChatState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Reply from the evidence; the answer call spends what the recall left of the budget."""
    run = scope(runtime, state.namespace)
    caller = run.caller()
    allowance = state.budget.spent.left_of(run.context.llm_budget.limit)
    text, decision, usage = reply(caller, state.query, state.evidence, state.context, allowance)
    details: dict[str, Any] = {}
    if caller is not None:
        details["llm"] = usage.trace(answer_prompt.ROLE.name)
    budget = state.budget.model_copy(update=(state.budget.spent + usage.spent).counters())
    return {
        "messages": [AIMessage(content=text)],
        "budget": budget,
        "trace": record(
            runtime,
            TraceEvent(
                node="respond",
                decision=decision,
                reason=f"{len(state.evidence)} evidence items; stop: {state.stop_reason}",
                details=details,
                budget=budget.spent.counters(),
            ),
        ),
    }
