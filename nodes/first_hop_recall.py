"""Recall node: the first hop — semantic, lexical and cue-index top-k (RippleMem §2.3).

Beside them, ``exact``: the memories that alone hold an identifier of the question (a term
with a digit: a code, an order number), which assembly ranks above every other memory.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ripplegraph.agent.context import Context
from ripplegraph.agent.decisions.policies.query import parse_query
from ripplegraph.agent.memory.cues import TimeResolver
from ripplegraph.agent.services import scope
from ripplegraph.agent.state import Evidence, EvidenceSource, RecallState, TraceEvent, spent_after
from ripplegraph.agent.tracing import record

_resolver = TimeResolver()


def first_hop_recall(state: RecallState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Ground the query's cues, then union the three channels into the evidence pool."""
    run = scope(runtime, state.namespace)
    context = run.context
    store = run.store()
    config = context.recall_config()
    people, places = store.vocabulary(run.namespace)
    cues = state.cues or parse_query(
        state.query, people, places, store.latest_time(run.namespace), _resolver
    )
    # One model call for the question and its name-free form; later reads hit the cache.
    store.embedder.queries([state.query, *([cues.content] if cues.content else [])])
    depth = config.first_hop_depths(context.recall.evidence_k, cues.multi_part)
    hits = {
        "semantic": store.search_semantic(run.namespace, state.query, depth["semantic"]),
        "lexical": store.search_lexical(run.namespace, state.query, depth["lexical"]),
        "exact": store.search_exact(run.namespace, state.query, depth["lexical"])
        if config.exact_terms
        else [],
        "cue": [
            (m.unit_id, float(m.shared))
            for m in store.search_cues(
                run.namespace,
                cues.people,
                cues.places,
                cues.time,
                k=depth["cue"],
                query=cues.content or state.query,
            )
        ]
        if (cues.people or cues.places or cues.time)
        else [],
    }
    memories = store.get(run.namespace, {mid for found in hits.values() for mid, _ in found})
    sources: dict[str, list[EvidenceSource]] = {}  # in first-found order, as the pool is
    for channel, found in hits.items():
        for rank, (mid, score) in enumerate(found, start=1):
            if mid in memories:
                sources.setdefault(mid, []).append(
                    EvidenceSource(channel=channel, rank=rank, score=round(score, 6))  # type: ignore[arg-type]
                )
    pool = {mid: Evidence(memory=memories[mid], sources=found) for mid, found in sources.items()}
    return {
        "namespace": run.namespace,
        "cues": cues,
        "pool": pool,
        "trace": record(
            runtime,
            TraceEvent(
                node="first_hop_recall",
                decision="recalled",
                reason=", ".join(f"{len(v)} {k}" for k, v in hits.items())
                + f" → {len(pool)} distinct memories"
                + (
                    f" in {run.namespace!r}, the signed-in user's namespace"
                    if run.namespace != state.namespace
                    else ""
                ),
                added=list(pool),
                details={"cues": cues.model_dump(mode="json")},
                budget=spent_after(state),
            ),
        ),
    }
