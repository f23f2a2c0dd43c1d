"""Recall node: counterfactual refinement for advice, plan and recommendation questions."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from agent.context import Context, resolve_context
from agent.policies.counterfactual import seek_constraints
from agent.state import Evidence, EvidenceSource, RecallState, TraceEvent, spent_after
from agent.tracing import record


def refine_counterfactually(state: RecallState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Seek the standing constraints that could make the asked-about action go wrong."""
    context = resolve_context(runtime.context)
    config = context.recall_config()
    store = context.store()
    assert state.cues is not None
    found = seek_constraints(
        store,
        state.namespace,
        state.cues,
        store.embedder.query(state.query),
        config.counterfactual_k,
    )
    pool = {
        memory.id: Evidence(
            memory=memory,
            sources=[EvidenceSource(channel="counterfactual", rank=rank, score=score)],
        )
        for rank, (memory, score, _) in enumerate(found, start=1)
    }
    return {
        "pool": pool,
        "counterfactuals": [statement for _, _, statement in found],
        "refinements": 1,
        "trace": record(
            runtime,
            TraceEvent(
                node="refine_counterfactually",
                decision=f"{len(found)} constraint(s) retrieved",
                reason="offline: retrieved the standing constraints (health, diet, allergies, "
                "pets, money, time, goals, recent changes) of the people in the question, "
                "ranked against the action; no world knowledge was used",
                added=[mid for mid in pool if mid not in state.pool],
                budget=spent_after(state, refinements=1),
            ),
        ),
    }
