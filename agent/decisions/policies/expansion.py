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
from ripplegraph.agent.recall_config import RecallConfig
from ripplegraph.agent.state import Plan
from ripplegraph.agent.store import DIALOGUE, SEMANTIC, STRUCTURAL, MemoryStore


@dataclass(frozen=True)
class Reached:
    """A candidate found by expansion: its path from an anchor and its score."""

    memory: MemoryUnit
    channel: str
    path: list[str]
    edges: list[str]  # the type of each edge along ``path``; the last one is ``channel``
    strength: float
    score: float


def walked_types(config: RecallConfig) -> tuple[str, ...]:
    """The edge types a walk under ``config`` follows, each a channel of its own."""
    return (
        SEMANTIC,
        *([STRUCTURAL] if config.structural_edges else []),
        *([DIALOGUE] if config.dialogue_edges else []),
    )


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
    """Breadth-first over typed edges from the anchors, then the best n per channel.

    The walk keeps, per memory, the edge that first reached it (its path's last step) and,
    per channel, the memory at the depth above that reached it; paths are spelt out only for
    the memories kept, since a recall walks about a hundred and keeps a few dozen.
    """
    anchors = set(plan.anchors)
    first: dict[str, tuple[str, str]] = {}  # memory -> (where its first path came from, edge)
    depth = dict.fromkeys(plan.anchors, 0)
    strength = dict.fromkeys(plan.anchors, 1.0)
    # Per candidate, the memory one level up that each channel reached it from.
    via: dict[str, dict[str, str]] = {}
    frontier = list(plan.anchors)
    for level in range(1, hops + 1):
        next_frontier: list[str] = []
        for src, dst, edge_type, weight in store.neighbours(namespace, frontier, edge_types):
            if dst in anchors:
                continue
            if dst not in depth:
                depth[dst] = level
                first[dst] = (src, edge_type)
                held = strength[src]
                strength[dst] = held if held < weight else weight
                next_frontier.append(dst)
            if depth[dst] == level:
                via.setdefault(dst, {}).setdefault(edge_type, src)
        frontier = next_frontier

    def walk_to(mid: str) -> tuple[list[str], list[str]]:
        path, edges = [mid], []
        while mid in first:
            mid, edge_type = first[mid]
            path.append(mid)
            edges.append(edge_type)
        return path[::-1], edges[::-1]

    memories = store.get(namespace, [mid for mid in via if mid not in exclude])
    vectors = store.embeddings(namespace, list(memories))
    wanted = target_cues(plan)
    score = {
        mid: (float(vectors[mid] @ target_vector) if mid in vectors else 0.0)
        + cue_match(memory, wanted)
        for mid, memory in memories.items()
    }
    kept: dict[str, Reached] = {}
    for channel in edge_types:
        ranked = sorted(
            (mid for mid in memories if channel in via[mid]),
            key=lambda mid: (-score[mid], depth[mid], -strength[mid], mid),
        )
        for mid in ranked[:top_n]:
            if mid not in kept:
                path, edges = walk_to(via[mid][channel])
                kept[mid] = Reached(
                    memories[mid],
                    channel,
                    [*path, mid],
                    [*edges, channel],
                    strength[mid],
                    score[mid],
                )
    return sorted(kept.values(), key=lambda r: (-r.score, len(r.path), r.memory.id))
