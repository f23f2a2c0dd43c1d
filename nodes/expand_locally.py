"""Recall node: bounded expansion from the anchors over typed edges and along the dialogue."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ripplegraph.agent.context import Context
from ripplegraph.agent.decisions.policies.expansion import (
    WalkModel,
    expand,
    walk_target,
    walked_types,
)
from ripplegraph.agent.learned import SHIPPED_WALKER, shipped
from ripplegraph.agent.services import scope
from ripplegraph.agent.state import Evidence, EvidenceSource, RecallState, TraceEvent, spent_after
from ripplegraph.agent.tracing import record


def expand_locally(state: RecallState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Add the best-matching neighbours of the anchors (top n per channel) to the pool."""
    run = scope(runtime, state.namespace)
    context = run.context
    config = context.recall_config()
    hops = context.recall.hops
    store = run.store()
    assert state.plan is not None
    edge_types = walked_types(config)
    target = walk_target(store, state.plan)
    round_number = state.rounds + 1
    model = (
        WalkModel(
            config.walker or shipped(SHIPPED_WALKER),
            store.embedder.query(state.query),
            round_number,
        )
        if config.learned_walk
        else None
    )
    reached = expand(
        store,
        run.namespace,
        state.plan,
        target,
        exclude=state.pool.keys(),
        hops=hops,
        top_n=config.expansion_width(
            context.recall.evidence_k, state.cues is not None and state.cues.multi_part
        ),
        edge_types=edge_types,
        model=model,
    )
    pool = {
        r.memory.id: Evidence(
            memory=r.memory,
            sources=[
                EvidenceSource(
                    channel="expansion",
                    rank=rank,
                    score=round(r.score, 6),
                    path=r.path,
                    edges=r.edges,
                    round=round_number,
                )
            ],
        )
        for rank, r in enumerate(reached, start=1)
    }
    return {
        "pool": pool,
        "rounds": 1,
        "hops": hops,
        "trace": record(
            runtime,
            TraceEvent(
                node="expand_locally",
                decision=f"round {round_number}: {len(pool)} new memories",
                reason=f"{hops}-hop neighbourhood of {len(state.plan.anchors)} anchors over "
                + (f"{', '.join(edge_types[:-1])} and " if len(edge_types) > 1 else "")
                + f"{edge_types[-1]} edges, "
                + (
                    f"chosen by the learned walk model ({model.ranker.about.get('name', 'walker')})"
                    if model
                    else "scored against the target"
                ),
                added=list(pool),
                details={"paths": {r.memory.id: r.path for r in reached}}
                | ({"reasons": {r.memory.id: r.reasons for r in reached}} if model else {}),
                budget=spent_after(state, rounds=1, hops=hops),
            ),
        ),
    }
