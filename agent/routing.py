"""Typed routers: they re-check every budget, so the machine ends whatever a decision says."""

from __future__ import annotations

from typing import Literal

from langgraph.runtime import Runtime

from ripplegraph.agent.context import Context, resolve_context
from ripplegraph.agent.state import RecallState


def after_sufficiency(
    state: RecallState, runtime: Runtime[Context]
) -> Literal["plan_recollection", "refine_counterfactually", "assemble_evidence"]:
    """Expand or refine only while the decision asks for it *and* the budget allows it."""
    context = resolve_context(runtime.context)
    limits = context.recall
    config = context.recall_config()
    within_llm_budget = state.spent.within(context.llm_budget.limit)
    if (
        state.decision == "refine"
        and config.counterfactual
        and state.refinements < limits.refinements
        and within_llm_budget
    ):
        return "refine_counterfactually"
    if (
        state.decision == "expand"
        and config.expansion
        and state.rounds < limits.rounds
        and within_llm_budget
    ):
        return "plan_recollection"
    return "assemble_evidence"
