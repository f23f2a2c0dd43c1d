"""Ingest node: fact clusters and PMI-filtered causal edges for the new memories (ActMem B–C)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ripplegraph.agent.context import Context
from ripplegraph.agent.decisions.causal import PMIScorer, assign_clusters
from ripplegraph.agent.decisions.roles import Usage
from ripplegraph.agent.errors import ModelUnavailable
from ripplegraph.agent.services import scope
from ripplegraph.agent.state import IngestState, TraceEvent
from ripplegraph.agent.store import CAUSAL
from ripplegraph.agent.tracing import record
from ripplegraph.prompts import causal

_CLUSTER_WINDOW = 12  # the latest facts of a cluster shown to the proposer


def link_causes(state: IngestState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Cluster new memories; propose cause → effect pairs per touched cluster; keep PMI ≥ θ."""
    run = scope(runtime, state.namespace)
    context = run.context
    caller = run.caller()
    ids = [*state.written_ids, *state.resumed_ids]
    if caller is None or not ids:
        reason = (
            "no model configured (causal edges need one)" if caller is None else "no new memories"
        )
        event = TraceEvent(node="link_causes", decision="skipped", reason=reason)
        return {"trace": record(runtime, event)}
    store = run.store()
    touched = assign_clusters(store, run.namespace, ids, run.deployment.building.cluster_threshold)
    if not run.deployment.llm.base_url:
        event = TraceEvent(
            node="link_causes",
            decision=f"clustered into {len(touched)} cluster(s); causal edges off",
            reason="PMI needs prompt log-probabilities from an OpenAI-compatible /v1/completions "
            "endpoint (set base_url, e.g. vLLM); the configured provider has none",
        )
        return {"trace": record(runtime, event)}
    allowance = state.spent.left_of(context.ingest_budget.limit)
    usage = Usage()
    scorer = PMIScorer(run.deployment.llm.base_url, run.deployment.llm.model or "")
    new = set(ids)
    kept: list[tuple[str, str, float]] = []
    rejected = 0
    problem = ""
    for cluster_id in sorted(touched):
        member_ids = store.cluster_members(run.namespace, cluster_id)[-_CLUSTER_WINDOW:]
        if len(member_ids) < 2 or not new & set(member_ids):
            continue
        units = store.get(run.namespace, member_ids)
        members = [units[m] for m in member_ids if m in units]
        outcome = caller(causal.ROLE, causal.render(members), usage.left(allowance))
        usage.add(outcome, f"cluster {cluster_id}: ")
        for pair in outcome.value.pairs if outcome.value else []:
            cause, effect = units.get(pair.cause_id), units.get(pair.effect_id)
            if cause is None or effect is None or problem:
                continue
            if usage.left(allowance).calls < 1:
                problem = "ingest LLM budget spent"
                continue
            usage.charge(scorer.cost(cause, effect))
            try:
                score = scorer.pmi(cause, effect)
            except ModelUnavailable as error:
                problem = str(error)[:160]
                continue
            if score >= run.deployment.building.causal_pmi_threshold:
                kept.append((cause.id, effect.id, round(score, 4)))
            else:
                rejected += 1
    if kept:
        store.replace_edges(run.namespace, CAUSAL, [], kept)
    event = TraceEvent(
        node="link_causes",
        decision=f"{len(kept)} causal edge(s) kept, {rejected} rejected by PMI",
        reason="; ".join(x for x in (problem, usage.note) if x)
        or f"{len(touched)} cluster(s) touched",
        details={
            "edges": kept,
            "threshold": run.deployment.building.causal_pmi_threshold,
            "llm": usage.trace(causal.ROLE.name),
        },
    )
    return {
        **usage.spent.counters(),
        "edges_added": {**state.edges_added, "causal": len(kept)},
        "trace": record(runtime, event),
    }
