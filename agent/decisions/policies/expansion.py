"""Offline local expansion: candidates only from the anchors' h-hop neighbourhood (RippleMem §2.3).

Candidates are grouped by the edge type that reached them and the top n per channel are kept.
Which n is decided either by the hand score (semantic similarity to the target restatement
moved towards the anchors, plus the share of target cues they carry; ties to shorter paths,
then stronger edges) or, where the settings ask for it, by a learned walk model over
``WALK_FEATURES``: relations of a walked memory to the target, the question and the anchors,
never its words.  A kept memory's expansion score is the hand score either way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from ripplegraph.agent.decisions.policies.ranking import UNKNOWN
from ripplegraph.agent.learned import Ranker
from ripplegraph.agent.memory import MemoryUnit
from ripplegraph.agent.memory.text import normalise_cue
from ripplegraph.agent.models.llm import estimate_tokens
from ripplegraph.agent.recall_config import RecallConfig
from ripplegraph.agent.state import Plan
from ripplegraph.agent.store import DIALOGUE, SEMANTIC, STRUCTURAL, MemoryStore

WALK_FEATURES: tuple[str, ...] = (
    "target_alignment",
    "target_below_best",
    "target_rank",
    "question_alignment",
    "cue_match",
    "depth",
    "strength",
    *(f"via_{edge}" for edge in (SEMANTIC, STRUCTURAL, DIALOGUE)),
    "channels",
    "anchor_session",
    "days_from_anchor",
    "speaker_of_anchor",
    "round",
    "tokens",
)
"""The columns of a walk table, in the order the walk model's file names them."""


@dataclass(frozen=True)
class Reached:
    """A candidate found by expansion: its path from an anchor and its score."""

    memory: MemoryUnit
    channel: str
    path: list[str]
    edges: list[str]  # the type of each edge along ``path``; the last one is ``channel``
    strength: float
    score: float
    reasons: dict[str, float] = field(default_factory=dict)
    """Where a walk model chose it: its strongest feature contributions to that choice."""


@dataclass
class Walk:
    """What a breadth-first walk from the anchors reached, before any is chosen.

    Per memory, the edge that first reached it (its path's last step), its depth, its weakest
    link and, per channel, the memory at the depth above that reached it; ``memories`` are the
    candidates (reached, not excluded) in the walk's order, ``vectors`` their embeddings.
    """

    anchors: list[str]
    first: dict[str, tuple[str, str]] = field(default_factory=dict)
    depth: dict[str, int] = field(default_factory=dict)
    strength: dict[str, float] = field(default_factory=dict)
    via: dict[str, dict[str, str]] = field(default_factory=dict)
    memories: dict[str, MemoryUnit] = field(default_factory=dict)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)

    def path_to(self, mid: str) -> tuple[list[str], list[str]]:
        """The first path from an anchor to ``mid``, and its edges' types."""
        path, edges = [mid], []
        while mid in self.first:
            mid, edge_type = self.first[mid]
            path.append(mid)
            edges.append(edge_type)
        return path[::-1], edges[::-1]


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


def walk_target(store: MemoryStore, plan: Plan) -> np.ndarray:
    """What the walk's candidates are scored against: the plan's target, embedded."""
    return store.embedder.query(plan.target)


def walk(
    store: MemoryStore,
    namespace: str,
    anchors: Sequence[str],
    exclude: Collection[str],
    *,
    hops: int,
    edge_types: Sequence[str] = (SEMANTIC, STRUCTURAL),
) -> Walk:
    """Breadth-first over typed edges from the anchors, ``hops`` deep.

    Paths are spelt out only for the memories kept (``Walk.path_to``), since a recall walks
    about a hundred and keeps a few dozen.
    """
    found = Walk(list(anchors))
    starts = set(anchors)
    found.depth = dict.fromkeys(anchors, 0)
    found.strength = dict.fromkeys(anchors, 1.0)
    depth, strength, via = found.depth, found.strength, found.via
    frontier = list(anchors)
    for level in range(1, hops + 1):
        next_frontier: list[str] = []
        for src, dst, edge_type, weight in store.neighbours(namespace, frontier, edge_types):
            if dst in starts:
                continue
            if dst not in depth:
                depth[dst] = level
                found.first[dst] = (src, edge_type)
                held = strength[src]
                strength[dst] = held if held < weight else weight
                next_frontier.append(dst)
            if depth[dst] == level:
                via.setdefault(dst, {}).setdefault(edge_type, src)
        frontier = next_frontier
    found.memories = store.get(namespace, [mid for mid in via if mid not in exclude])
    found.vectors = store.embeddings(namespace, list(found.memories))
    return found


def hand_score(found: Walk, mid: str, wanted: frozenset[str], target_vector: np.ndarray) -> float:
    """A candidate's similarity to the target plus the share of the target's cues it holds."""
    vector = found.vectors.get(mid)
    similarity = float(vector @ target_vector) if vector is not None else 0.0
    return similarity + cue_match(found.memories[mid], wanted)


def walk_table(
    store: MemoryStore,
    namespace: str,
    found: Walk,
    plan: Plan,
    target_vector: np.ndarray,
    question_vector: np.ndarray,
    round_number: int,
) -> np.ndarray:
    """One row of ``WALK_FEATURES`` per candidate of ``found``, in ``found.memories`` order.

    Built a column at a time (a round walks a hundred-odd candidates); the cosines
    come from one matrix product, which may differ from ``hand_score``'s in the last bit.
    """
    ids = list(found.memories)
    if not ids:
        return np.zeros((0, len(WALK_FEATURES)))
    memories = [found.memories[mid] for mid in ids]
    vias = [found.via[mid] for mid in ids]
    zero = np.zeros_like(target_vector)
    vectors = np.array([found.vectors.get(mid, zero) for mid in ids])
    target, question = (vectors @ np.stack([target_vector, question_vector]).T).T
    rank = np.empty(len(ids))
    rank[np.argsort(-target, kind="stable")] = np.arange(len(ids))
    wanted = target_cues(plan)
    anchors = [a.provenance for a in store.get(namespace, found.anchors).values()]
    sessions = {a.session_id for a in anchors}
    times = [t for a in anchors if (t := a.session_time)]
    speakers = {s: n / len(anchors) for s, n in Counter(a.speaker for a in anchors).items()}
    provenances = [m.provenance for m in memories]
    dates = {p.session_id: p.session_time for p in provenances}  # a walk spans few sessions
    days = {
        session: min((abs((when - t).total_seconds()) / 86_400 for t in times), default=UNKNOWN)
        if when
        else UNKNOWN
        for session, when in dates.items()
    }
    share = 1.0 / len(wanted) if wanted else 0.0
    per_memory = np.array(
        [
            (
                len(wanted & m.terms) * share if wanted else 0.0,
                p.session_id in sessions,
                days[p.session_id],
                speakers.get(p.speaker, 0.0),
                estimate_tokens(m.text),
            )
            for m, p in zip(memories, provenances, strict=True)
        ],
        dtype=np.float64,
    )
    depth, strength = found.depth, found.strength
    per_walk = np.array(
        [
            (
                depth[mid],
                strength[mid],
                SEMANTIC in via,
                STRUCTURAL in via,
                DIALOGUE in via,
                len(via),
            )
            for mid, via in zip(ids, vias, strict=True)
        ],
        dtype=np.float64,
    )
    return np.column_stack(
        [
            target,
            target.max() - target,
            rank,
            question,
            per_memory[:, 0],
            per_walk,
            per_memory[:, 1:4],
            np.full(len(ids), float(round_number)),
            np.log1p(per_memory[:, 4]),
        ]
    )


def choose(
    found: Walk,
    order: Mapping[str, float],
    score: Callable[[str], float],
    *,
    top_n: int,
    edge_types: Sequence[str],
) -> list[Reached]:
    """The best ``top_n`` candidates per channel by ``order``, each kept with its ``score``.

    Ties go to shorter paths, then stronger edges; the result is by score, best first.
    """
    kept: dict[str, Reached] = {}
    for channel in edge_types:
        ranked = sorted(
            (mid for mid in found.memories if channel in found.via[mid]),
            key=lambda mid: (-order[mid], found.depth[mid], -found.strength[mid], mid),
        )
        for mid in ranked[:top_n]:
            if mid not in kept:
                path, edges = found.path_to(found.via[mid][channel])
                kept[mid] = Reached(
                    found.memories[mid],
                    channel,
                    [*path, mid],
                    [*edges, channel],
                    found.strength[mid],
                    score(mid),
                )
    return sorted(kept.values(), key=lambda r: (-r.score, len(r.path), r.memory.id))


@dataclass(frozen=True)
class WalkModel:
    """A learned choice of what the walk keeps: the model and what it relates candidates to."""

    ranker: Ranker
    question_vector: np.ndarray
    round_number: int


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
    model: WalkModel | None = None,
) -> list[Reached]:
    """The walk from the plan's anchors, its best n per channel by the hand score or ``model``.

    A memory ``model`` chose carries its three strongest contributions (``Reached.reasons``).
    """
    found = walk(store, namespace, plan.anchors, exclude, hops=hops, edge_types=edge_types)
    wanted = target_cues(plan)
    if model is None:
        scores = {mid: hand_score(found, mid, wanted, target_vector) for mid in found.memories}
        return choose(found, scores, scores.__getitem__, top_n=top_n, edge_types=edge_types)
    table = walk_table(
        store, namespace, found, plan, target_vector, model.question_vector, model.round_number
    )
    parts = model.ranker.contributions(table)
    learned = model.ranker.bias + parts.sum(axis=1)
    kept = choose(
        found,
        dict(zip(found.memories, learned.tolist(), strict=True)),
        lambda mid: hand_score(found, mid, wanted, target_vector),
        top_n=top_n,
        edge_types=edge_types,
    )
    row = {mid: index for index, mid in enumerate(found.memories)}
    why = model.ranker.strongest(parts[[row[r.memory.id] for r in kept]], 3)
    return [replace(r, reasons=reasons) for r, reasons in zip(kept, why, strict=True)]
