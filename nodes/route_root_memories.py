"""Recall node: activate the root memory units whose rules apply to the query (RootMem §3.2)."""

from __future__ import annotations

from typing import Any

import numpy as np
from langgraph.runtime import Runtime

from ripplegraph.agent.context import Context
from ripplegraph.agent.decisions.policies.roots import namespace_roots, route_roots
from ripplegraph.agent.decisions.roles import Usage, decide, route
from ripplegraph.agent.memory import RootUnit
from ripplegraph.agent.services import scope
from ripplegraph.agent.state import Evidence, EvidenceSource, RecallState, TraceEvent, spent_after
from ripplegraph.agent.tracing import record
from ripplegraph.prompts import root_router


def route_root_memories(state: RecallState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Add active units' rules and evidence to the pool."""
    run = scope(runtime, state.namespace)
    context = run.context
    config = context.recall_config()
    if not config.roots:
        event = TraceEvent(
            node="route_root_memories",
            decision="skipped",
            reason="root memories disabled",
            budget=spent_after(state),
        )
        return {"trace": record(runtime, event)}
    store = run.store()
    roots, rule_vectors = namespace_roots(
        store, run.namespace, config.max_root_units, config.root_evidence
    )
    cues = state.cues
    assert cues is not None
    query_vector = store.embedder.query(state.query)
    allowance = state.spent.left_of(context.llm_budget.limit)
    cosines = rule_vectors @ query_vector if roots else np.zeros(0)
    decided = decide(
        run.caller("routing") if roots else None,
        lambda: (
            route_roots(
                roots,
                rule_vectors,
                cues,
                query_vector,
                config.root_threshold,
                config.decision_root_units,
            ),
            "",
        ),
        lambda caller: _scored(route(caller, state.query, roots, allowance), roots, cosines),
    )
    active, why = decided.value
    how = "offline routing"
    if decided.by_model:
        how = decided.noted(f"LLM router: {why}")
    elif decided.asked:
        how = f"offline routing ({decided.usage.note})"
    usage, details = decided.usage, decided.details(root_router.ROLE.name)
    evidence_ids = [mid for root, _ in active for mid in root.evidence_ids]
    memories = store.get(run.namespace, evidence_ids)
    pool: dict[str, Evidence] = {}
    for root, score in active:
        for rank, mid in enumerate(root.evidence_ids, start=1):
            if mid in memories:
                source = EvidenceSource(channel="root", rank=rank, score=score, path=[root.id])
                # units the model judged to apply are evidence the answer needs
                pool[mid] = Evidence(
                    memory=memories[mid], sources=[source], standing=decided.by_model
                )
    new = [mid for mid in pool if mid not in state.pool]
    return {
        "roots": [root for root, _ in active],
        **usage.spent.counters(),
        "pool": pool,
        "trace": record(
            runtime,
            TraceEvent(
                node="route_root_memories",
                decision=f"activated {len(active)} of {len(roots)}",
                reason=f"{how} — "
                + (
                    "; ".join(f"{r.person} / {r.topic} ({s:.2f})" for r, s in active)
                    or "no unit's rule applies"
                ),
                added=new,
                details=details,
                budget=spent_after(state, usage.spent),
            ),
        ),
    }


def _scored(
    routed: tuple[tuple[list[RootUnit], str] | None, Usage],
    roots: list[RootUnit],
    cosines: np.ndarray,
) -> tuple[tuple[list[tuple[RootUnit, float]], str] | None, Usage]:
    """The router's choice with each unit's query–rule cosine, as offline routing scores it."""
    chosen, usage = routed
    if chosen is None:
        return None, usage
    units, why = chosen
    score = dict(zip([r.id for r in roots], cosines.tolist(), strict=True))
    return ([(root, round(float(score[root.id]), 4)) for root in units], why), usage
