"""Chat node: answer from the recalled evidence (LLM answer role, or offline extractive)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from agent.context import Context, scope
from agent.llm import Allowance
from agent.policies.answer import extractive_answer
from agent.roles import Usage, answer
from agent.state import ChatState, TraceEvent
from agent.tracing import record
from prompts import answer as answer_prompt


def respond(state: ChatState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Reply from the evidence; the answer call spends what the recall left of the budget."""
    run = scope(runtime, state.namespace)
    context = run.context
    text = extractive_answer(state.query, state.evidence)
    decision, usage = "offline extractive answer", Usage()
    details: dict[str, Any] = {}
    caller = run.caller()
    if caller is not None:
        spent = state.budget
        allowance = Allowance.remaining(context.limits(), spent.llm_calls, spent.tokens)
        ids = {e.memory.id for e in state.evidence}
        reply, usage = answer(caller, state.query, state.context, ids, allowance)
        if reply is not None:
            text = reply.answer
            if reply.cited_ids:
                text += "\n\nSources: " + ", ".join(reply.cited_ids)
            decision = "LLM answer" if reply.supported else "LLM answer: memory lacks support"
            if usage.note:
                decision += f" [{usage.note}]"
        else:
            decision = f"offline extractive answer ({usage.note})"
        details["llm"] = usage.trace(answer_prompt.ROLE.name)
    budget = state.budget.model_copy(
        update={
            "llm_calls": state.budget.llm_calls + usage.calls,
            "tokens": state.budget.tokens + usage.tokens,
        }
    )
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
                budget={"llm_calls": budget.llm_calls, "tokens": budget.tokens},
            ),
        ),
    }
