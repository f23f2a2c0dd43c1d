"""Recall node: dedupe, rank the pool, keep the top K under the token budget, render the context.

The learned ranker orders the pool (``policies.ranking``); with it switched off, ρ does.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ripplegraph.agent.context import Context
from ripplegraph.agent.decisions.policies.assembly import rank_pool, select
from ripplegraph.agent.decisions.policies.ranking import (
    candidates,
    learned_for,
    learned_order,
)
from ripplegraph.agent.learned import shipped
from ripplegraph.agent.services import scope
from ripplegraph.agent.state import QueryCues, RecallState, TraceEvent, budget_use, spent_after
from ripplegraph.agent.tracing import record
from ripplegraph.prompts.evidence import render_evidence


def assemble_evidence(state: RecallState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The final evidence list with provenance, root blocks first in the rendered context."""
    run = scope(runtime, state.namespace)
    context = run.context
    store = run.store()
    config = context.recall_config()
    ranked = rank_pool(store, run.namespace, state.alignment_query, state.pool, config)
    k, tokens = context.recall.evidence_k, context.recall.context_tokens
    cues = state.cues or QueryCues()
    if config.learned and learned_for(cues):
        ranker = config.ranker or shipped()
        table = candidates(store, run.namespace, state.query, cues, state.plan, ranked)
        order = learned_order(ranked, table, ranker)
        evidence = order.explained(select(order.items, k, tokens), ranker)
        how = f"learned ranking ({ranker.about.get('name', 'ranker')})"
    else:
        evidence, how = select(ranked, k, tokens), "ρ ranking" + " (a decision)" * config.learned
    stop_reason = state.stop_reason or f"budget exhausted after {state.rounds} rounds"
    return {
        "evidence": evidence,
        "context": render_evidence(evidence, state.roots),
        "stop_reason": stop_reason,
        "budget": budget_use(state, context.limits()),
        "trace": record(
            runtime,
            TraceEvent(
                node="assemble_evidence",
                decision=f"kept {len(evidence)} of {len(ranked)}",
                reason=f"{how}, K = {k}, {tokens} context tokens; stop: {stop_reason}",
                budget=spent_after(state),
            ),
        ),
    }
