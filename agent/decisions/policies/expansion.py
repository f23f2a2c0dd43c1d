"""Offline local expansion: candidates only from the anchors' h-hop neighbourhood (RippleMem §2.3).

Candidates are grouped by the edge type that reached them, scored against the target
(semantic similarity to the target restatement moved towards the anchors, plus the share of
target cues they carry), and the top n per channel are kept; ties go to shorter paths, then
stronger edges.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from ripplegraph.agent.memory import MemoryUnit
from ripplegraph.agent.memory.text import normalise_cue
from ripplegraph.agent.state import Plan
from ripplegraph.agent.store import SEMANTIC, STRUCTURAL, MemoryStore


@dataclass(frozen=True)
class Reached:
    """A candidate found by expansion: its path from an anchor and its score."""

    memory: MemoryUnit
    channel: str
    path: list[str]
    edges: list[str]  # the type of each edge along ``path``; the last one is ``channel``
    strength: float
    score: float


def target_cues(plan: Plan) -> frozenset[str]:
    """The target's people, places and terms, as memories' terms name them."""
    wanted = {normalise_cue(p) for p in [*plan.target_people, *plan.target_places]}
    return frozenset(wanted | set(plan.target_terms))


def cue_match(memory: MemoryUnit, wanted: frozenset[str]) -> float:
    """Share of the target's cues (``target_cues``) the memory carries."""
    if not wanted:
        return 0.0
    return len(wanted & memory.terms) / len(wanted)


def feedback_target(target: np.ndarray, anchors: Sequence[np.ndarray]) -> np.ndarray:
    """The target moved towards its anchors: the unit mean of both directions.

    What a set question still lacks looks like what it already found ("I'm reading *Dune*"
    beside "I finished that fantasy series") more than like the question ("What books has
    John read?"), so candidates are scored against both (relevance feedback).
    """
    if not anchors:
        return target
    centre = np.mean(anchors, axis=0)
    blended = target / np.linalg.norm(target) + centre / np.linalg.norm(centre)
    return np.asarray(blended / np.linalg.norm(blended), dtype=target.dtype)


def expand(
    store: MemoryStore,
    namespace: str,
    plan: Plan,
    target_vector: np.ndarray,
    exclude: Collection[str],
    *,
    hops: int,
    top_n: int,
    edge_types: Sequence[str] = (SEMANTIC, STRUCTURAL),
) -> list[Reached]:
    """Breadth-first over typed edges from the anchors, then the best n per channel."""
    paths: dict[str, list[str]] = {a: [a] for a in plan.anchors}
    walked: dict[str, list[str]] = {a: [] for a in plan.anchors}  # edge types along paths
    strength: dict[str, float] = dict.fromkeys(plan.anchors, 1.0)
    # Per candidate, the channels that reach it at its depth, each with the path it took.
    channels: dict[str, dict[str, tuple[list[str], list[str]]]] = {}
    frontier = list(plan.anchors)
    anchors = set(plan.anchors)
    for _ in range(hops):
        next_frontier: list[str] = []
        for edge in store.neighbours(namespace, frontier, edge_types):
            src, dst = edge.src, edge.dst
            if dst in anchors:
                continue
            if dst not in paths:
                paths[dst] = [*paths[src], dst]
                walked[dst] = [*walked[src], edge.type]
                strength[dst] = min(strength[src], edge.weight)
                next_frontier.append(dst)
            if len(paths[dst]) == len(paths[src]) + 1:
                reaching = channels.setdefault(dst, {})
                if edge.type not in reaching:
                    reaching[edge.type] = ([*paths[src], dst], [*walked[src], edge.type])
        frontier = next_frontier
    candidates = [mid for mid in channels if mid not in exclude]
    memories = store.get(namespace, candidates)
    vectors = store.embeddings(namespace, list(memories))
    wanted = target_cues(plan)
    reached: list[Reached] = []
    for mid, memory in memories.items():
        similarity = float(vectors[mid] @ target_vector) if mid in vectors else 0.0
        score = similarity + cue_match(memory, wanted)
        for channel, (path, edges) in sorted(channels[mid].items()):
            reached.append(Reached(memory, channel, path, edges, strength[mid], score))
    kept: dict[str, Reached] = {}
    for channel in edge_types:
        ranked = sorted(
            (r for r in reached if r.channel == channel),
            key=lambda r: (-r.score, len(r.path), -r.strength, r.memory.id),
        )
        for r in ranked[:top_n]:
            kept.setdefault(r.memory.id, r)
    return sorted(kept.values(), key=lambda r: (-r.score, len(r.path), r.memory.id))
