"""The learned ranker's features and tiers, computed on a hand-made pool (no embedding model)."""

from __future__ import annotations

from datetime import datetime

import numpy as np

from ripplegraph.agent.decisions.policies.ranking import (
    FEATURES,
    UNKNOWN,
    UNRANKED,
    Question,
    learned_for,
    learned_order,
    table,
)
from ripplegraph.agent.learned import Ranker, Shape
from ripplegraph.agent.memory import MemoryUnit, Provenance
from ripplegraph.agent.state import Evidence, EvidenceSource, Plan, QueryCues, TimeInterval


def item(
    mid: str,
    text: str,
    *sources: EvidenceSource,
    session: str = "s1",
    day: int = 1,
    speaker: str = "Maya",
    standing: bool = False,
) -> Evidence:
    provenance = Provenance(
        session_id=session, speaker=speaker, session_time=datetime(2024, 5, day)
    )
    memory = MemoryUnit(id=mid, namespace="ns", text=text, people=["Maya"], provenance=provenance)
    return Evidence(memory=memory, sources=list(sources), standing=standing)


def source(channel: str, rank: int, score: float = 1.0, **walk: object) -> EvidenceSource:
    return EvidenceSource(channel=channel, rank=rank, score=score, **walk)  # type: ignore[arg-type]


POOL = [
    item(
        "a", "Maya is allergic to shellfish", source("semantic", 1, 0.9), source("lexical", 2, 4.0)
    ),
    item("b", "Maya booked a table", source("lexical", 1, 8.0), session="s2", day=20),
    item(
        "c",
        "Sam likes oysters",
        source("expansion", 3, 0.4, path=["a"], edges=["semantic", "dialogue"], round=1),
        speaker="Sam",
    ),
    item("d", "Maya is pregnant", source("root", 2, 0.5), standing=True, session="s3", day=3),
    item("e", "order 88-1 shipped", source("exact", 1, 1.0), session="s2", day=20),
]
CUES = QueryCues(
    people=["Maya"],
    terms=["allergic", "table"],
    time=TimeInterval(start=datetime(2024, 5, 1), end=datetime(2024, 5, 2)),
)


def column(matrix: np.ndarray, name: str) -> list[float]:
    return matrix[:, FEATURES.index(name)].tolist()


def test_each_feature_is_a_relation_to_the_question_not_a_word() -> None:
    plan = Plan(anchors=["a"], target_terms=["oyster"])
    matrix = table(
        POOL, [0.8, 0.5, 0.3, 0.1, 0.2], [0.7, 0.6, 0.2, 0.1, 0.2],
        Question(CUES, plan, frozenset({"c"})),
    )  # fmt: skip
    assert matrix.shape == (5, len(FEATURES))
    assert column(matrix, "semantic_rank") == [1.0, UNRANKED, UNRANKED, UNRANKED, UNRANKED]
    assert column(matrix, "lexical_share") == [0.5, 1.0, 0.0, 0.0, 0.0]
    assert column(matrix, "alignment_rank") == [0.0, 1.0, 2.0, 4.0, 3.0]
    assert column(matrix, "alignment_below_best")[0] == 0.0
    assert column(matrix, "round") == [0.0, 0.0, 1.0, 0.0, 0.0]
    assert column(matrix, "hops") == [0.0, 0.0, 2.0, 0.0, 0.0]
    assert column(matrix, "via_dialogue") == [0.0, 0.0, 1.0, 0.0, 0.0]
    assert column(matrix, "via_semantic") == [0.0] * 5  # the walk arrived by its last edge
    assert column(matrix, "anchor") == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert column(matrix, "exact") == [0.0, 0.0, 0.0, 0.0, 1.0]
    # The head is the direct hits (not c, the walk's) best aligned: sessions s1, s2, s3.
    assert column(matrix, "head_session") == [1.0] * 5
    assert column(matrix, "session_direct_hits") == [1.0, 2.0, 1.0, 1.0, 2.0]
    assert column(matrix, "beside_head") == [0.0, 0.0, 1.0, 0.0, 0.0]
    assert column(matrix, "days_from_asked_time") == [0.0, 18.0, 0.0, 1.0, 18.0]
    assert column(matrix, "speaker_named") == [1.0, 1.0, 0.0, 1.0, 1.0]
    assert column(matrix, "terms_shared") == [1.0, 1.0, 0.0, 0.0, 0.0]
    assert column(matrix, "target_terms_shared") == [0.0, 0.0, 1.0, 0.0, 0.0]
    assert column(matrix, "people_shared") == [1.0] * 5


def test_rho_is_read_as_the_pool_ranks_it() -> None:
    # The pool comes ranked by ρ, each memory carrying it: its order is ρ's rank.
    rhos = [2.0, 1.5, 1.5, 0.5, 0.0]
    ranked = [i.model_copy(update={"score": rho}) for i, rho in zip(POOL, rhos, strict=True)]
    matrix = table(ranked, [0.8] * 5, [0.8] * 5, Question(CUES, None, frozenset()))
    assert column(matrix, "rho_rank") == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert column(matrix, "rho_below_best") == [0.0, 0.5, 0.5, 1.5, 2.0]


def test_a_memory_with_no_date_has_no_distance() -> None:
    undated = POOL[0].model_copy(
        update={
            "memory": POOL[0].memory.model_copy(update={"provenance": Provenance(session_id="s")})
        }
    )
    matrix = table([undated], [0.5], [0.5], Question(QueryCues(), None, frozenset()))
    assert column(matrix, "days_from_asked_time") == [UNKNOWN]
    assert column(matrix, "days_from_head") == [UNKNOWN]


def test_named_memories_first_then_the_learned_score() -> None:
    alignment = Ranker(
        FEATURES,
        tuple(
            Shape(f, np.array([0.5]), np.array([0.0, 1.0]) if f == "alignment" else np.zeros(2))
            for f in FEATURES
        ),
    )
    matrix = table(POOL, [0.8, 0.6, 0.7, 0.1, 0.2], [0.0] * 5, Question(CUES, None, frozenset()))
    order = learned_order(POOL, matrix, alignment)
    assert [e.memory.id for e in order.items] == ["e", "a", "b", "c", "d"]
    (kept,) = order.explained(order.items[1:2], alignment)
    assert kept.score == 1.0
    assert kept.score_parts == {"alignment": 0.0, "learned:alignment": 1.0}
    assert order.items[1].score == 0.0, "only the kept memories are copied"


def test_a_decision_is_still_ordered_by_rho() -> None:
    assert learned_for(QueryCues()) and not learned_for(QueryCues(decision=True))
