"""What the learned ranker knows of a pooled memory: relations to the question, never words.

Each feature is a rank, a score, a distance, a type or an overlap count: how a channel ranked
the memory, by what edges and in which round the walk reached it, whether it shares the
session, the day or the speaker of the question's best direct hits (the *head*), how many of
the question's terms it holds, and where the hand-set score ρ places it (its rank in the
pool and how far it is below the best), which the model learns where to trust.  None names a
word, a person or a conversation, so a model trained on them learns what evidence looks like
to recall, not what these conversations say.

Assembly keeps memories the question names first (the ``exact`` channel: an identifier of the
question, which no similarity outranks), then the pool by the learned score.  A decision
question is still ordered by ρ (``learned_for``).
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from ripplegraph.agent.decisions.policies.assembly import found_directly as direct
from ripplegraph.agent.decisions.policies.assembly import named
from ripplegraph.agent.learned import Ranker
from ripplegraph.agent.memory.text import normalise_cue
from ripplegraph.agent.models.llm import estimate_tokens
from ripplegraph.agent.state import Evidence, Plan, QueryCues
from ripplegraph.agent.store import DIALOGUE, MemoryStore

HEAD = 10
"""The head: the question's best direct hits by alignment (a reader's first screen)."""
UNRANKED = 1000.0
"""A channel's rank for a memory it did not reach: past any pool."""
UNKNOWN = -1.0
"""A distance that cannot be measured (no date on either side)."""
LEARNED = "learned:"
"""How a kept memory's ``score_parts`` name a feature's contribution (``learned:alignment``)."""

RANKED_CHANNELS = ("semantic", "lexical", "cue", "expansion", "root", "counterfactual")
EDGE_TYPES = ("semantic", "structural", "dialogue", "causal")
FEATURES: tuple[str, ...] = (
    "alignment",
    "alignment_question",
    "alignment_below_best",
    "alignment_rank",
    "rho_rank",
    "rho_below_best",
    *(f"{channel}_rank" for channel in RANKED_CHANNELS),
    "lexical_share",
    "cue_score",
    "expansion_score",
    "channels",
    "sources",
    "round",
    "hops",
    *(f"via_{edge}" for edge in EDGE_TYPES),
    "anchor",
    "anchor_session",
    "exact",
    "head_session",
    "session_direct_hits",
    "beside_head",
    "days_from_asked_time",
    "days_from_head",
    "speaker_named",
    "speaker_of_head",
    "terms_shared",
    "terms_share",
    "target_terms_shared",
    "people_shared",
    "tokens",
)
"""The columns of a candidate table, in the order the ranker file names them."""


@dataclass(frozen=True)
class Question:
    """What the features relate a memory to: the question's cues, the plan, the head's turns."""

    cues: QueryCues
    plan: Plan | None
    beside_head: frozenset[str]
    """Memories written just before or after a head memory in its session (dialogue edges)."""


@dataclass
class _Reached:
    """How the sources reached one memory: one pass over them, read by several features."""

    ranks: dict[str, float]
    scores: dict[str, float]
    arrivals: set[str]
    channels: set[str]
    round: float
    hops: float
    direct: bool
    """Whether one of the question's own channels found the memory (not only the walk)."""

    @classmethod
    def of(cls, item: Evidence) -> _Reached:
        """The memory's sources, read once."""
        ranks = dict.fromkeys(RANKED_CHANNELS, UNRANKED)
        scores: dict[str, float] = {}
        arrivals: set[str] = set()
        channels: set[str] = set()
        first_round, walk = math.inf, math.inf
        direct_hit = False
        for source in item.sources:
            channel = source.channel
            channels.add(channel)
            direct_hit = direct_hit or channel != "expansion"
            if channel in ranks:
                ranks[channel] = min(ranks[channel], float(source.rank))
            scores[channel] = max(scores.get(channel, 0.0), source.score)
            if source.edges:
                arrivals.add(source.edges[-1])
            first_round = min(first_round, source.round)
            if channel == "expansion":
                walk = min(walk, len(source.edges))
        hops = 0.0 if direct_hit or walk == math.inf else float(walk)
        return cls(
            ranks,
            scores,
            arrivals,
            channels,
            0.0 if first_round == math.inf else float(first_round),
            hops,
            direct_hit,
        )


def head_of(
    items: Sequence[Evidence], alignment: Sequence[float], directs: Sequence[bool] | None = None
) -> list[Evidence]:
    """The head: the ``HEAD`` direct hits best aligned with the question.

    ``directs`` says which items are direct hits, when the caller has read their sources.
    """
    found = directs if directs is not None else [direct(item) for item in items]
    hits = [(item, a) for item, a, d in zip(items, alignment, found, strict=True) if d]
    hits.sort(key=lambda hit: (-hit[1], hit[0].memory.id))
    return [item for item, _ in hits[:HEAD]]


def _days(a: datetime | None, b: datetime | None) -> float:
    return abs((a - b).total_seconds()) / 86_400 if a and b else UNKNOWN


def _from_interval(when: datetime | None, cues: QueryCues) -> float:
    if when is None or cues.time is None:
        return UNKNOWN
    if cues.time.start <= when < cues.time.end:
        return 0.0
    return min(_days(when, cues.time.start), _days(when, cues.time.end))


def table(
    items: Sequence[Evidence],
    alignment: Sequence[float],
    alignment_question: Sequence[float],
    question: Question,
) -> np.ndarray:
    """One row of ``FEATURES`` per pooled memory, in ``items`` order.

    ``items`` are the pool ranked by ρ, best first, each scored (``assembly.rank_pool``):
    their order is ``rho_rank``.  ``alignment`` is each memory's cosine with the question's
    content (what ρ aligns with), ``alignment_question`` with the whole question.
    """
    if not items:
        return np.zeros((0, len(FEATURES)))
    cues, plan = question.cues, question.plan
    reached = [_Reached.of(item) for item in items]
    head = head_of(items, alignment, [how.direct for how in reached])
    head_sessions = {h.memory.provenance.session_id for h in head}
    head_times = {t for h in head if (t := h.memory.provenance.session_time)}
    head_speakers = Counter(h.memory.provenance.speaker for h in head)
    anchors = set(plan.anchors) if plan else set()
    anchor_sessions = {
        i.memory.provenance.session_id for i in items if i.memory.id in anchors or i.anchor
    }
    direct_hits = Counter(
        item.memory.provenance.session_id
        for item, how in zip(items, reached, strict=True)
        if how.direct
    )
    best_lexical = max(how.scores.get("lexical", 0.0) for how in reached)
    order = np.argsort(-np.asarray(alignment), kind="stable")
    alignment_rank = np.empty(len(items))
    alignment_rank[order] = np.arange(len(items))
    best = max(alignment)
    best_rho = max(item.score for item in items)
    terms = set(cues.terms)
    target = set(plan.target_terms) if plan else set()
    norm = functools.cache(normalise_cue)  # a pool names few people: normalise each once
    people = {norm(p) for p in cues.people}
    distances: dict[datetime, tuple[float, float]] = {}  # a session's date: few in a pool

    def from_question_and_head(when: datetime | None) -> tuple[float, float]:
        if when is None:
            return UNKNOWN, UNKNOWN
        if when not in distances:
            near = min((_days(when, t) for t in head_times), default=UNKNOWN)
            distances[when] = (_from_interval(when, cues), near)
        return distances[when]

    rows = []
    for index, (item, how) in enumerate(zip(items, reached, strict=True)):
        memory, provenance = item.memory, item.memory.provenance
        shared = memory.terms & terms
        speaker = provenance.speaker
        rows.append(
            [
                alignment[index],
                alignment_question[index],
                best - alignment[index],
                float(alignment_rank[index]),
                float(index),
                best_rho - item.score,
                *(how.ranks[channel] for channel in RANKED_CHANNELS),
                how.scores.get("lexical", 0.0) / best_lexical if best_lexical > 0 else 0.0,
                how.scores.get("cue", 0.0),
                how.scores.get("expansion", 0.0),
                float(len(how.channels)),
                float(len(item.sources)),
                how.round,
                how.hops,
                *(float(edge in how.arrivals) for edge in EDGE_TYPES),
                float(item.anchor or memory.id in anchors),
                float(provenance.session_id in anchor_sessions),
                float("exact" in how.channels),
                float(provenance.session_id in head_sessions),
                float(direct_hits[provenance.session_id]),
                float(memory.id in question.beside_head),
                *from_question_and_head(provenance.session_time),
                float(bool(speaker) and norm(speaker or "") in people),
                head_speakers[speaker] / len(head) if head else 0.0,
                float(len(shared)),
                len(shared) / len(terms) if terms else 0.0,
                float(len(memory.terms & target)),
                float(len({norm(p) for p in memory.people} & people)),
                math.log1p(estimate_tokens(memory.text)),
            ]
        )
    return np.asarray(rows, dtype=np.float64)


def learned_for(cues: QueryCues) -> bool:
    """Whether the learned ranker orders this question's evidence: every question but a decision.

    A decision ("should I…", "can you recommend…") needs its constraints, which share no words
    with it; the development conversations hold too few decisions to learn them from, so ρ,
    with its standing-fact term, keeps ordering them.
    """
    return not cues.decision


@dataclass(frozen=True)
class Learned:
    """A pool as the ranker orders it: best first, each memory's score and contributions."""

    items: list[Evidence]
    scores: dict[str, float]
    contributions: dict[str, np.ndarray]

    def explained(self, kept: Sequence[Evidence], ranker: Ranker, top: int = 3) -> list[Evidence]:
        """The memories kept, each carrying its learned score and its ``top`` reasons.

        ``score`` becomes the learned score; ``score_parts`` keeps the alignment and gains
        the strongest feature contributions, each named ``LEARNED`` + the feature.  Only the
        kept memories are copied: a pool holds a few hundred, K are kept.
        """
        reasons = ranker.strongest(
            np.array([self.contributions[item.memory.id] for item in kept]), top
        )
        return [
            item.model_copy(
                update={
                    "score": round(self.scores[item.memory.id], 6),
                    "score_parts": {"alignment": item.score_parts.get("alignment", 0.0)}
                    | {LEARNED + f: v for f, v in why.items()},
                }
            )
            for item, why in zip(kept, reasons, strict=True)
        ]


def learned_order(items: Sequence[Evidence], matrix: np.ndarray, ranker: Ranker) -> Learned:
    """The pool by the ranker's score (ties by id), memories the question names first."""
    parts = ranker.contributions(matrix) if len(items) else np.zeros((0, len(ranker.features)))
    scores = ranker.bias + parts.sum(axis=1)
    order = sorted(
        range(len(items)),
        key=lambda i: (not named(items[i]), -scores[i], items[i].memory.id),
    )
    return Learned(
        [items[i] for i in order],
        {items[i].memory.id: float(scores[i]) for i in order},
        {items[i].memory.id: parts[i] for i in order},
    )


def candidates(
    store: MemoryStore,
    namespace: str,
    query: str,
    cues: QueryCues,
    plan: Plan | None,
    ranked: Sequence[Evidence],
) -> np.ndarray:
    """The candidate table of a pool ranked by ρ (``assembly.rank_pool``: it holds alignments).

    Reads what the table needs beyond the pool: the whole question's vector and the memories'
    (both cached by the store), and the dialogue neighbours of the head.
    """
    alignment = [item.score_parts.get("alignment", 0.0) for item in ranked]
    vectors = store.embeddings(namespace, [item.memory.id for item in ranked])
    asked = store.embedder.query(query)
    whole = [float(vectors[i.memory.id] @ asked) if i.memory.id in vectors else 0.0 for i in ranked]
    head = [h.memory.id for h in head_of(ranked, alignment)]
    beside = frozenset(e.dst for e in store.neighbours(namespace, head, (DIALOGUE,)))
    return table(ranked, alignment, whole, Question(cues, plan, beside))
