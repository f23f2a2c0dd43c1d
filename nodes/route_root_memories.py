"""Recall node: activate the root memory units whose rules apply to the query (RootMem §3.2)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from agent.context import Context, scope
from agent.llm import Allowance
from agent.policies.roots import namespace_roots, route_roots
from agent.roles import Usage, route
from agent.state import Evidence, EvidenceSource, RecallState, TraceEvent, spent_after
from agent.tracing import record
from prompts import root_router


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
    assert state.cues is not None
    query_vector = store.embedder.query(state.query)
    active = route_roots(roots, rule_vectors, state.cues, query_vector, config.root_threshold)
    how, usage = "offline routing", Usage()
    details: dict[str, Any] = {}
    caller = run.caller("routing")
    if caller is not None and roots:
        limits = context.limits()
        allowance = Allowance.remaining(limits, state.llm_calls, state.tokens)
        chosen, why, usage = route(caller, state.query, roots, allowance)
        if chosen is not None:
            scores = dict(
                zip([r.id for r in roots], (rule_vectors @ query_vector).tolist(), strict=True)
            )
            active = [(root, round(float(scores[root.id]), 4)) for root in chosen]
            how = f"LLM router: {why}" + (f" [{usage.note}]" if usage.note else "")
        else:
            how = f"offline routing ({usage.note})"
        details["llm"] = usage.trace(root_router.ROLE.name)
    evidence_ids = [mid for root, _ in active for mid in root.evidence_ids]
    memories = store.get(run.namespace, evidence_ids)
    pool: dict[str, Evidence] = {}
    for root, score in active:
        for rank, mid in enumerate(root.evidence_ids, start=1):
            if mid in memories:
                source = EvidenceSource(channel="root", rank=rank, score=score, path=[root.id])
                pool[mid] = Evidence(memory=memories[mid], sources=[source])
    new = [mid for mid in pool if mid not in state.pool]
    return {
        "roots": [root for root, _ in active],
        "llm_calls": usage.calls,
        "tokens": usage.tokens,
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
                budget=spent_after(state, llm_calls=usage.calls, tokens=usage.tokens),
            ),
        ),
    }
