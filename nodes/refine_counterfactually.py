"""Recall node: counterfactual refinement for advice, plan and recommendation questions."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ripplegraph.agent.context import Context
from ripplegraph.agent.decisions.policies.assembly import rank_pool
from ripplegraph.agent.decisions.policies.counterfactual import seek_constraints
from ripplegraph.agent.decisions.policies.sufficiency import COVERAGE_WINDOW
from ripplegraph.agent.decisions.roles import Usage, decide, risks
from ripplegraph.agent.models.llm import RoleCaller
from ripplegraph.agent.services import scope
from ripplegraph.agent.state import (
    Evidence,
    EvidenceSource,
    RecallState,
    TraceEvent,
    merge_pool,
    risk_label,
    spent_after,
)
from ripplegraph.agent.store import CAUSAL_TYPES
from ripplegraph.agent.tracing import record
from ripplegraph.prompts import counterfactual


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
    ranked = rank_pool(store, run.namespace, state.alignment_query, state.pool, config)
    window = ranked[:COVERAGE_WINDOW]
    sought = seek_constraints(
        store,
        run.namespace,
        state.cues,
        store.embedder.query(state.query),
        config.counterfactual_k,
        [e.memory.id for e in window],
        unrelated=sum(e.score_parts["alignment"] < config.unrelated_below for e in window),
    )
    found = sought.found
    reason = (
        "offline: the active standing facts (states, changes of status, commitments, "
        "preferences) of the people in the question, ranked against the action, lifted into "
        "view over unrelated memories only; superseded facts set aside; no world knowledge "
        "was used"
    )
    allowance = state.spent.left_of(context.llm_budget.limit)

    def ask(caller: RoleCaller) -> tuple[list[str] | None, Usage]:
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
    details["facts"] = {f.memory.id: f.reason for f in found}
    details["lifted"] = sought.lifted
    details["already_in_view"] = sought.present
    details["superseded"] = sought.superseded
    statements = stated + [f.statement for f in found]
    pool: dict[str, Evidence] = {}
    for rank, fact in enumerate(found, start=1):
        label = risk_label(len(stated) + rank - 1)
        source = EvidenceSource(channel="counterfactual", rank=rank, score=fact.score, path=[label])
        pool[fact.memory.id] = Evidence(
            memory=fact.memory, sources=[source], standing=fact.memory.id in sought.lifted
        )
    for index, risk in enumerate(stated):
        label = risk_label(index)
        hits = store.search_semantic(run.namespace, risk, config.counterfactual_k)
        causes = store.neighbours(run.namespace, [m for m, _ in hits], CAUSAL_TYPES)
        memories = store.get(run.namespace, [m for m, _ in hits] + [e.dst for e in causes])
        reached: list[tuple[str, float, list[str], list[str]]] = [
            (m, s, [label], []) for m, s in hits
        ] + [(e.dst, e.weight, [label, e.src], [e.type]) for e in causes]
        standing = sought.index.standing([mid for mid, *_ in reached])
        for rank, (mid, score, path, edges) in enumerate(reached, start=1):
            if mid not in memories:
                continue
            source = EvidenceSource(
                channel="counterfactual", rank=rank, score=score, path=path, edges=edges
            )
            # a standing fact a stated risk reaches is a constraint the model tied to the
            # action: it is lifted like the offline ones
            reached_item = Evidence(
                memory=memories[mid], sources=[source], standing=mid in standing
            )
            pool = merge_pool(pool, {mid: reached_item})
    return {
        "pool": pool,
        "counterfactuals": statements,
        "refinements": 1,
        **usage.spent.counters(),
        "trace": record(
            runtime,
            TraceEvent(
                node="refine_counterfactually",
                decision=f"{len(found)} standing fact(s), {len(sought.lifted)} lifted into view",
                reason=reason,
                added=[mid for mid in pool if mid not in state.pool],
                details=details,
                budget=spent_after(state, usage.spent, refinements=1),
            ),
        ),
    }
