"""Recall node: choose ≤3 anchors from the pool and restate the missing support as a target."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ripplegraph.agent.context import Context
from ripplegraph.agent.decisions.policies.assembly import rank_pool
from ripplegraph.agent.decisions.policies.planning import plan_recollection as make_plan
from ripplegraph.agent.services import scope
from ripplegraph.agent.state import Plan, RecallState, TraceEvent, spent_after
from ripplegraph.agent.tracing import record


def plan_recollection(state: RecallState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Validate and complete the plan: anchors from the pool, a target and its cues.

    The LLM controller's proposal is kept where it is valid (anchors that are in the pool, a
    target); the offline plan fills whatever it lacks.
    """
    run = scope(runtime, state.namespace)
    context = run.context
    config = context.recall_config()
    store = run.store()
    assert state.cues is not None
    ranked = rank_pool(store, run.namespace, state.alignment_query, state.pool, config)
    plan = make_plan(
        state.query,
        state.cues,
        ranked,
        state.missing,
        config.max_anchors,
        config.planned,
        config.spread_anchors,
    )
    origin = "planned" if config.planned else "unplanned (ablation)"
    proposed = state.proposed_plan
    if proposed is not None and config.planned:
        valid = [a for a in proposed.anchors if a in state.pool][: config.max_anchors]
        origin = f"LLM plan, {len(valid)} of {len(proposed.anchors)} anchors valid"
        plan = Plan(
            anchors=valid or plan.anchors,
            target=proposed.target or plan.target,
            target_people=proposed.target_people or plan.target_people,
            target_places=proposed.target_places or plan.target_places,
            target_terms=plan.target_terms,
        )
    anchors = {mid: state.pool[mid].model_copy(update={"anchor": True}) for mid in plan.anchors}
    return {
        "plan": plan,
        "pool": anchors,
        "trace": record(
            runtime,
            TraceEvent(
                node="plan_recollection",
                decision=origin,
                reason=f"{len(plan.anchors)} anchors; target: {plan.target} "
                f"[missing: {', '.join(plan.target_terms) or '-'}]",
                details=plan.model_dump(),
                budget=spent_after(state),
            ),
        ),
    }
