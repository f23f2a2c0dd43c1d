"""Evidence assembly (RippleMem §2.4): dedupe by id, source-aware score ρ, top-K under a budget.

ρ(m) = λq·a(q, m) + λp·π(m) + λa·anchor(m) + λs·standing(m), where a is the query–memory
cosine (floored at 0), π sums, over every source that reached m, the source's weight times
1/(offset + rank), and standing(m) marks an active standing fact a decision question needs.
ρ steers recollection (coverage, anchors, the counterfactual window); what is kept at the end
is the learned ranker's choice (``policies.ranking``) unless a recipe ranks by hand.

A memory the ``exact`` channel reached alone holds an identifier of the question (a term with
a digit: a code, an order number), which names it more surely than any similarity: its ρ is
lifted by the best ρ of the pool's other memories, so such memories come first, in ρ order
among themselves, with no weight to tune.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ripplegraph.agent.models.llm import estimate_tokens
from ripplegraph.agent.recall_config import RecallConfig
from ripplegraph.agent.state import Evidence
from ripplegraph.agent.store import MemoryStore


def score_parts(item: Evidence, alignment: float, config: RecallConfig) -> dict[str, float]:
    """ρ's three weighted terms for one pooled memory, beside the raw alignment a(q, m)."""
    path_support = sum(
        float(getattr(config.weights, s.channel)) / (config.rank_offset + s.rank)
        for s in item.sources
    )
    return {
        "alignment": alignment,
        "query": config.lambda_query * max(0.0, alignment),
        "path": config.lambda_path * path_support,
        "anchor": config.lambda_anchor * (1.0 if item.anchor else 0.0),
        "standing": config.lambda_standing * (1.0 if item.standing else 0.0),
    }


def total(parts: dict[str, float]) -> float:
    """ρ from its weighted terms (and the lift of a memory the question names, if any)."""
    return (
        parts["query"] + parts["path"] + parts["anchor"] + parts["standing"] + parts.get("named", 0)
    )


def named(item: Evidence) -> bool:
    """Whether the question names this memory: it alone holds one of the question's identifiers."""
    return any(source.channel == "exact" for source in item.sources)


def score(item: Evidence, alignment: float, config: RecallConfig) -> float:
    """Source-aware score ρ of one pooled memory."""
    return total(score_parts(item, alignment, config))


@dataclass(frozen=True)
class Scored:
    """One pooled memory as ranked: the pool's own object, its copy carrying ρ, and ρ unrounded."""

    item: Evidence
    ranked: Evidence
    rho: float


def still_scored(before: dict[str, Scored], mid: str, item: Evidence) -> bool:
    """Whether ``item`` keeps its score from ``before``: the same object, and not named."""
    old = before.get(mid)
    return old is not None and old.item is item and not named(item)


def score_pool(
    pool: dict[str, Evidence],
    query_vector: np.ndarray,
    vectors: dict[str, np.ndarray],
    config: RecallConfig,
    before: dict[str, Scored] | None = None,
) -> dict[str, Scored]:
    """Each pooled memory scored by ρ, in pool order.

    ``before`` holds the scores of an earlier pool with the same query and settings: a memory
    whose pool object is the very one scored then keeps its score (items are never changed in
    place), unless the question names it, whose lift depends on the rest of the pool.
    ``vectors`` needs only the memories not kept.  Memories the question names are lifted
    above the rest (the module's docstring).
    """
    kept: dict[str, Scored] = {}
    fresh: dict[str, tuple[dict[str, float], bool]] = {}  # parts, and whether it is named
    before = before or {}
    for mid, item in pool.items():
        if still_scored(before, mid, item):
            kept[mid] = before[mid]
        else:
            alignment = float(vectors[mid] @ query_vector) if mid in vectors else 0.0
            fresh[mid] = score_parts(item, alignment, config), named(item)
    lift = max(
        [
            *(s.rho for s in kept.values()),
            *(total(p) for p, is_named in fresh.values() if not is_named),
        ],
        default=0.0,
    )
    scored: dict[str, Scored] = {}
    for mid, item in pool.items():
        if mid in kept:
            scored[mid] = kept[mid]
            continue
        parts, is_named = fresh[mid]
        if is_named:
            parts["named"] = lift
        rho = total(parts)
        copy = item.model_copy(
            update={
                "score": round(rho, 6),
                "score_parts": {name: round(value, 6) for name, value in parts.items()},
            }
        )
        scored[mid] = Scored(item, copy, rho)
    return scored


def ordered(scored: dict[str, Scored]) -> list[Evidence]:
    """Scored memories best first (ties by id for determinism)."""
    return sorted((s.ranked for s in scored.values()), key=lambda e: (-e.score, e.memory.id))


def rank(
    pool: dict[str, Evidence],
    query_vector: np.ndarray,
    vectors: dict[str, np.ndarray],
    config: RecallConfig,
) -> list[Evidence]:
    """Pool items scored by ρ, best first (ties by id for determinism)."""
    return ordered(score_pool(pool, query_vector, vectors, config))


_Key = tuple[MemoryStore, str, str, RecallConfig]  # store, namespace, query, settings


@dataclass(frozen=True)
class _Ranking:
    key: _Key
    scored: dict[str, Scored]  # holds the pool's own objects, so identity stays meaningful
    ranked: list[Evidence]

    def of(self, key: _Key, pool: dict[str, Evidence]) -> bool:
        return (
            len(self.scored) == len(pool)
            and all(
                s.item is item for s, item in zip(self.scored.values(), pool.values(), strict=True)
            )
            and self.key == key
        )


class _Rankings:
    """The last few pools ranked, recognised by the identity of their items.

    A recall ranks its pool at each sufficiency check, plan, refinement and assembly; the
    pool is often unchanged in between (a plan ranks what the check just ranked), and a
    round of recollection adds to it rather than changing what is there.  Pool items are
    never changed in place (every update is a copy), so the same objects in the same order,
    with the same store, query and settings, have the same ranking, and an object scored in
    the last ranking of that query keeps its score.  Entries hold the items, so their
    identities cannot be reused; the deque bounds what is held.
    """

    def __init__(self, size: int = 16) -> None:
        self._entries: deque[_Ranking] = deque(maxlen=size)
        self._lock = threading.Lock()

    def get(self, key: _Key, pool: dict[str, Evidence]) -> list[Evidence]:
        with self._lock:
            found = next((e for e in self._entries if e.of(key, pool)), None)
            last = next((e for e in reversed(self._entries) if e.key == key), None)
        if found is None:
            store, namespace, query, config = key
            before = last.scored if last is not None else {}
            fresh = [m for m, item in pool.items() if not still_scored(before, m, item)]
            vectors = store.embeddings(namespace, fresh)
            scored = score_pool(pool, store.embedder.query(query), vectors, config, before)
            found = _Ranking(key, scored, ordered(scored))
            with self._lock:
                self._entries.append(found)
        return list(found.ranked)


_rankings = _Rankings()


def rank_pool(
    store: MemoryStore, namespace: str, query: str, pool: dict[str, Evidence], config: RecallConfig
) -> list[Evidence]:
    """The pool ranked by ρ against the query (vectors come from the store's cache).

    A pool already ranked (the same items, query and settings) is not ranked again.
    """
    return _rankings.get((store, namespace, query, config), pool)


def found_directly(item: Evidence) -> bool:
    """Whether one of the question's own channels found the memory (not only the walk)."""
    return any(s.channel != "expansion" for s in item.sources)


def select(ranked: Sequence[Evidence], k: int, token_budget: int) -> list[Evidence]:
    """The top ``k`` that fit in ``token_budget`` (a too-long item is skipped, not cut)."""
    chosen: list[Evidence] = []
    used = 0
    for item in ranked:
        if len(chosen) >= k:
            break
        cost = estimate_tokens(item.memory.text) + 12
        if used + cost > token_budget:
            continue
        chosen.append(item)
        used += cost
    return chosen
