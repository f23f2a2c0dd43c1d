"""Recall node: counterfactual refinement for advice, plan and recommendation questions."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from agent.context import Context, scope
from agent.llm import Allowance, RoleCaller
from agent.policies.assembly import rank_pool
from agent.policies.counterfactual import seek_constraints
from agent.roles import Usage, decide, risks
from agent.state import (
    Evidence,
    EvidenceSource,
    RecallState,
    TraceEvent,
    risk_label,
    spent_after,
)
from agent.store import CAUSAL_TYPES
from agent.tracing import record
from prompts import counterfactual


def refine_counterfactually(state: RecallState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Seek the standing constraints that could make the asked-about action go wrong.

    With a model, the counterfactual role states the risks first ("if the user does this,
    what could go wrong?"); each risk is a second query, followed along causal edges.
    The offline constraint search runs either way.  Every source this step adds starts its
    path at the risk statement that found it.
    """
    run = scope(runtime, state.namespace)
    context = run.context
    config = context.recall_config()
    store = run.store()
    assert state.cues is not None
    found = seek_constraints(
        store,
        run.namespace,
        state.cues,
        store.embedder.query(state.query),
        config.counterfactual_k,
    )
    reason = (
        "offline: retrieved the standing constraints (health, diet, allergies, pets, money, "
        "time, goals, recent changes) of the people in the question, ranked against the "
        "action; no world knowledge was used"
    )
    allowance = Allowance.remaining(context.limits(), state.llm_calls, state.tokens)

    def ask(caller: RoleCaller) -> tuple[list[str] | None, Usage]:
        ranked = rank_pool(store, run.namespace, state.alignment_query, state.pool, config)
        return risks(caller, state.query, ranked, allowance)

    decided = decide(run.caller(), list[str], ask)
    stated, usage = decided.value, decided.usage
    if decided.by_model:
        reason = decided.noted(
            f"LLM risks used as second queries, along causal edges too: {stated}"
        )
    elif decided.asked:
        reason = f"{reason} (model: {usage.note})"
    details = decided.details(counterfactual.ROLE.name)
    statements = stated + [statement for _, _, statement in found]
    pool: dict[str, Evidence] = {}
    for rank, (memory, score, _) in enumerate(found, start=1):
        label = risk_label(len(stated) + rank - 1)
        source = EvidenceSource(channel="counterfactual", rank=rank, score=score, path=[label])
        pool[memory.id] = Evidence(memory=memory, sources=[source])
    for index, risk in enumerate(stated):
        label = risk_label(index)
        hits = store.search_semantic(run.namespace, risk, config.counterfactual_k)
        causes = store.neighbours(run.namespace, [m for m, _ in hits], CAUSAL_TYPES)
        memories = store.get(run.namespace, [m for m, _ in hits] + [e.dst for e in causes])
        reached: list[tuple[str, float, list[str], list[str]]] = [
            (m, s, [label], []) for m, s in hits
        ] + [(e.dst, e.weight, [label, e.src], [e.type]) for e in causes]
        for rank, (mid, score, path, edges) in enumerate(reached, start=1):
            if mid in memories and mid not in pool:
                source = EvidenceSource(
                    channel="counterfactual", rank=rank, score=score, path=path, edges=edges
                )
                pool[mid] = Evidence(memory=memories[mid], sources=[source])
    return {
        "pool": pool,
        "counterfactuals": statements,
        "refinements": 1,
        "llm_calls": usage.calls,
        "tokens": usage.tokens,
        "trace": record(
            runtime,
            TraceEvent(
                node="refine_counterfactually",
                decision=f"{len(pool)} constraint(s) retrieved",
                reason=reason,
                added=[mid for mid in pool if mid not in state.pool],
                details=details,
                budget=spent_after(
                    state, refinements=1, llm_calls=usage.calls, tokens=usage.tokens
                ),
            ),
        ),
    }
