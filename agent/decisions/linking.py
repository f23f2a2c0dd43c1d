"""Typed sparse edges between memories, without an LLM call per edge (RippleMem §2.2).

Each new memory draws a bounded candidate pool from the vector index (semantic channel) and
from the person/place/time cue indexes (structural channel), scores it, and keeps at most a
few edges per channel above that channel's threshold.  Degrees stay bounded on *both* ends:
edge selection is a greedy b-matching over the new candidate edges and the existing edges of
every node they touch, strongest first, so a strong new edge may displace an old node's
weakest one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ripplegraph.agent.memory import MemoryUnit
from ripplegraph.agent.memory.text import normalise_cue
from ripplegraph.agent.store import LINK_TYPES, SEMANTIC, STRUCTURAL, EdgeType, MemoryStore

# How the semantic threshold was calibrated for all-MiniLM-L6-v2 (the paper's 0.85 is for
# Qwen3 embeddings, whose cosines run higher): the rule is "the 99th percentile of random
# same-namespace pairs", i.e. an edge means far-above-chance similarity.  On the 2,760 LoCoMo
# dev turns (restated "Speaker: text", which lifts every pair a little) random pairs have
# median 0.27 and 99th percentile 0.62; each turn's nearest other turn has median 0.73, and at
# 0.62 91% of turns keep at least one semantic neighbour.  `ripplegraph calibrate` prints these
# quantiles for any store, so the rule can be re-applied to another model or corpus.
MINILM_SEMANTIC_THRESHOLD = 0.62


@dataclass(frozen=True)
class LinkingConfig:
    """Edge-building hyper-parameters (RippleMem's defaults; semantic threshold calibrated)."""

    candidates_per_channel: int = 20
    max_edges_per_channel: int = 6
    semantic_threshold: float = MINILM_SEMANTIC_THRESHOLD
    structural_threshold: float = 0.60
    person_weight: float = 0.50
    place_weight: float = 0.20
    time_weight: float = 0.30
    time_decay_days: float = 7.0


def _jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    left, right = {normalise_cue(x) for x in a}, {normalise_cue(x) for x in b}
    return len(left & right) / len(left | right)


def structural_similarity(a: MemoryUnit, b: MemoryUnit, config: LinkingConfig) -> float | None:
    """Weighted person/place/time cue similarity, over the cues both memories have.

    People and places compare by Jaccard overlap; times are 1 when the intervals meet and decay
    as exp(-gap/τ) otherwise.  Weights renormalise over comparable cues, so a missing cue is
    not counted as a mismatch; with no comparable cue there is no score (None).
    """
    total = weight = 0.0
    if a.people and b.people:
        total += config.person_weight * _jaccard(a.people, b.people)
        weight += config.person_weight
    if a.places and b.places:
        total += config.place_weight * _jaccard(a.places, b.places)
        weight += config.place_weight
    if a.time is not None and b.time is not None:
        closeness = math.exp(-a.time.gap_days(b.time) / config.time_decay_days)
        total += config.time_weight * closeness
        weight += config.time_weight
    return total / weight if weight else None


Pair = tuple[str, str]


def _pair(a: str, b: str) -> Pair:
    return (a, b) if a < b else (b, a)


def select_edges(
    candidates: dict[Pair, float],
    existing: dict[Pair, float],
    outside_degree: dict[str, int],
    max_degree: int,
) -> tuple[set[Pair], dict[Pair, float]]:
    """Greedy b-matching: strongest edges first, each node keeping at most ``max_degree``.

    ``existing`` holds every stored edge touching the affected nodes; ``outside_degree`` the
    edges each node has beyond those.  Returns the stored pairs to drop and the pairs to add.
    """
    pool = dict(existing)
    for pair, weight in candidates.items():
        pool[pair] = max(weight, pool.get(pair, weight))
    degree = dict(outside_degree)
    kept: dict[Pair, float] = {}
    for pair, weight in sorted(pool.items(), key=lambda item: (-item[1], item[0])):
        a, b = pair
        if degree.get(a, 0) < max_degree and degree.get(b, 0) < max_degree:
            kept[pair] = weight
            degree[a] = degree.get(a, 0) + 1
            degree[b] = degree.get(b, 0) + 1
    remove = {pair for pair in existing if pair not in kept}
    add = {pair: w for pair, w in kept.items() if existing.get(pair) != w}
    return remove, add


def _commit(
    store: MemoryStore,
    namespace: str,
    edge_type: EdgeType,
    candidates: dict[Pair, float],
    max_degree: int,
) -> int:
    """Merge candidate edges of one type into the store; returns the net change in edges."""
    affected = {node for pair in candidates for node in pair}
    stored = store.edges_touching(affected, edge_type)
    existing = {_pair(e.src, e.dst): e.weight for e in stored}
    incident: dict[str, int] = {}
    for a, b in existing:
        incident[a] = incident.get(a, 0) + 1
        incident[b] = incident.get(b, 0) + 1
    full_degree = store.degrees(incident.keys() - affected, edge_type)
    outside = {node: full_degree[node] - incident[node] for node in full_degree}
    remove, add = select_edges(candidates, existing, outside, max_degree)
    store.replace_edges(namespace, edge_type, remove, [(a, b, w) for (a, b), w in add.items()])
    return len(add.keys() - existing.keys()) - len(remove)


def semantic_candidates(
    store: MemoryStore, namespace: str, ids: Sequence[str], config: LinkingConfig
) -> dict[Pair, float]:
    """Pairs above the semantic threshold among each memory's nearest stored neighbours."""
    vectors = store.embeddings(namespace, ids)
    ordered = [mid for mid in ids if mid in vectors]
    if not ordered:
        return {}
    matrix = np.array([vectors[mid] for mid in ordered])
    hits = store.search_vectors(namespace, matrix, config.candidates_per_channel + 1)
    found: dict[Pair, float] = {}
    for mid, neighbours in zip(ordered, hits, strict=True):
        others = [(other, sim) for other, sim in neighbours if other != mid]
        for other, sim in others[: config.candidates_per_channel]:
            if sim >= config.semantic_threshold:
                found[_pair(mid, other)] = round(sim, 6)
    return found


def structural_candidates(
    store: MemoryStore, namespace: str, ids: Sequence[str], config: LinkingConfig
) -> dict[Pair, float]:
    """Pairs above the structural threshold among each memory's cue-index candidates."""
    units = store.get(namespace, ids)
    pools = {
        mid: store.search_cues(
            namespace,
            unit.people,
            unit.places,
            unit.time,
            k=config.candidates_per_channel,
            exclude=mid,
            window_days=config.time_decay_days,
        )
        for mid, unit in units.items()
    }
    others = store.get(namespace, {m.unit_id for pool in pools.values() for m in pool})
    found: dict[Pair, float] = {}
    for mid, pool in pools.items():
        for match in pool:
            score = structural_similarity(units[mid], others[match.unit_id], config)
            if score is not None and score >= config.structural_threshold:
                found[_pair(mid, match.unit_id)] = round(score, 6)
    return found


def link_units(
    store: MemoryStore, namespace: str, ids: Sequence[str], config: LinkingConfig
) -> dict[str, int]:
    """Add semantic and structural edges for newly stored memories; net edges added by type.

    Linking again is harmless (edges merge by b-matching), so units an interrupted ingest
    left pending are simply linked on the next run and only then marked linked.
    """
    if not ids:
        return dict.fromkeys(LINK_TYPES, 0)
    with store.write_lock():
        added: dict[str, int] = {
            SEMANTIC: _commit(
                store,
                namespace,
                SEMANTIC,
                semantic_candidates(store, namespace, ids, config),
                config.max_edges_per_channel,
            ),
            STRUCTURAL: _commit(
                store,
                namespace,
                STRUCTURAL,
                structural_candidates(store, namespace, ids, config),
                config.max_edges_per_channel,
            ),
        }
        store.mark_linked(ids)
        return added


def similarity_profile(
    store: MemoryStore, namespace: str, *, pairs: int = 20000, seed: int = 0
) -> dict[str, dict[str, float]]:
    """Cosine quantiles of random pairs and of each memory's nearest neighbour.

    This is how the semantic threshold is calibrated for an embedding model: pick a value far
    above the random-pair distribution that still leaves most memories a neighbour.
    """
    ids = [u.id for u in store.all_units(namespace)]
    vectors = store.embeddings(namespace, ids)
    matrix = np.stack([vectors[mid] for mid in ids if mid in vectors])
    rng = np.random.default_rng(seed)
    left = rng.integers(0, len(matrix), pairs)
    right = rng.integers(0, len(matrix), pairs)
    keep = left != right
    random_pairs = np.einsum("ij,ij->i", matrix[left[keep]], matrix[right[keep]])
    similarities = matrix @ matrix.T
    np.fill_diagonal(similarities, -1.0)
    nearest = similarities.max(axis=1)
    quantiles = (0.5, 0.9, 0.99, 0.995, 0.999)
    return {
        "random_pairs": {f"q{q}": float(np.quantile(random_pairs, q)) for q in quantiles},
        "nearest_neighbour": {
            f"q{q}": float(np.quantile(nearest, q)) for q in (0.1, 0.25, 0.5, 0.75, 0.9)
        },
    }
