"""Recall node: is the evidence enough? Decide stop / expand / refine and name what is missing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.runtime import Runtime

from ripplegraph.agent.context import Context
from ripplegraph.agent.decisions.policies.assembly import rank_pool
from ripplegraph.agent.decisions.policies.sufficiency import (
    OfflineSufficiency,
    findable,
    rounds_spent,
)
from ripplegraph.agent.decisions.roles import control, decide
from ripplegraph.agent.services import scope
from ripplegraph.agent.state import RecallState, TraceEvent, spent_after
from ripplegraph.agent.tracing import record
from ripplegraph.prompts import controller

_policy = OfflineSufficiency()


def check_sufficiency(state: RecallState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Stop, expand or refine; budgets turn an expand/refine wish into a stop.

    Decision questions are refined counterfactually first.  Otherwise the LLM controller
    decides (with a proposed plan) when a model is configured and another round may run, the
    offline coverage check when not, or when the controller's reply stays invalid.
    """
    run = scope(runtime, state.namespace)
    context = run.context
    config = context.recall_config()
    store = run.store()
    assert state.cues is not None
    ranked = rank_pool(store, run.namespace, state.alignment_query, state.pool, config)
    can_refine = config.counterfactual and state.refinements < context.recall.refinements

    def reachable(missing: Sequence[str]) -> list[str]:
        held = store.held_terms(run.namespace, missing)
        return findable(missing, held, store.count_sessions(run.namespace))

    round_left = state.rounds < context.recall.rounds
    verdict = _policy.decide(
        state.cues,
        ranked,
        refined=state.refinements > 0,
        can_refine=can_refine,
        expanded=state.rounds > 0 or not config.recollect_covered,
        # With no round left, the rounds are why recollection stops, whatever else holds.
        reachable=reachable if config.only_findable and round_left else None,
        own_decisions_once=config.own_decisions_once and round_left,
    )
    can_expand = config.expansion and round_left
    allowance = state.spent.left_of(context.llm_budget.limit)
    cues = state.cues
    decided = decide(
        run.caller("routing") if can_expand and verdict.decision != "refine" else None,
        lambda: (verdict.decision, verdict.reason, None),
        lambda caller: control(caller, state.query, cues, ranked, allowance),
    )
    decision, reason, proposed = decided.value
    if decided.by_model:
        reason = decided.noted(f"LLM controller: {reason}")
    elif decided.asked:
        reason = f"offline ({decided.usage.note}): {reason}"
    usage, stop_reason = decided.usage, ""
    details = {
        "missing": verdict.missing,
        "limits": context.limits(),
        **decided.details(controller.ROLE.name),
    }
    if decision == "expand" and not config.expansion:
        decision, stop_reason = "stop", "insufficient, expansion disabled"
    elif decision == "expand" and state.rounds >= context.recall.rounds:
        decision = "stop"
        stop_reason = rounds_spent(state.rounds, context.recall.rounds, verdict.missing)
    elif decision == "stop" and verdict.stopped_by and not decided.by_model:
        stop_reason = verdict.stopped_by
    elif decision == "stop":
        stop_reason = "sufficient"
    return {
        "decision": decision,
        "missing": verdict.missing,
        "proposed_plan": proposed,
        "stop_reason": stop_reason,
        **usage.spent.counters(),
        "trace": record(
            runtime,
            TraceEvent(
                node="check_sufficiency",
                decision=decision,
                reason=reason
                if not stop_reason or stop_reason == "sufficient"
                else f"{reason} — {stop_reason}",
                details=details,
                budget=spent_after(state, usage.spent),
            ),
        ),
    }
