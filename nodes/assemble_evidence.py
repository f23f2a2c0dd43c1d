"""Recall node: dedupe, score by ρ, keep the top K under the token budget, render the context."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ripplegraph.agent.context import Context
from ripplegraph.agent.decisions.policies.assembly import (
    beside_the_head,
    head_sessions,
    lifted,
    rank_pool,
    select,
    walked_last,
)
from ripplegraph.agent.decisions.policies.sufficiency import COVERAGE_WINDOW
from ripplegraph.agent.services import scope
from ripplegraph.agent.state import RecallState, TraceEvent, budget_use, spent_after
from ripplegraph.agent.tracing import record
from ripplegraph.prompts.evidence import render_evidence


def assemble_evidence(state: RecallState, runtime: Runtime[Context]) -> dict[str, Any]:
    """The final evidence list with provenance, root blocks first in the rendered context."""
    run = scope(runtime, state.namespace)
    context = run.context
    store = run.store()
    config = context.recall_config()
    ranked = rank_pool(store, run.namespace, state.alignment_query, state.pool, config)
    sessions, lift = head_sessions(ranked, COVERAGE_WINDOW), config.lambda_session
    ranked = beside_the_head(ranked, sessions, lift)
    evidence = lifted(
        select(
            walked_last(ranked, COVERAGE_WINDOW) if config.walk_below_head else ranked,
            context.recall.evidence_k,
            context.recall.context_tokens,
        ),
        sessions,
        lift,
    )
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
                reason=f"ρ ranking (its head's sessions lifted by {config.lambda_session}), "
                f"K = {context.recall.evidence_k}, "
                f"{context.recall.context_tokens} context tokens; stop: {stop_reason}",
                budget=spent_after(state),
            ),
        ),
    }
