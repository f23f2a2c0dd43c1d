"""Standing facts ranked against a question: people filter, supersession, ties, growth."""

from __future__ import annotations

from datetime import datetime

import numpy as np

from ripplegraph.agent.decisions.policies.counterfactual import Constraints, Found, lifted
from ripplegraph.agent.memory import MemoryUnit, Provenance

DAY = datetime(2024, 5, 1)
VECTORS = {
    "allergy": np.asarray([1.0, 0.0], dtype=np.float32),
    "pregnant": np.asarray([0.5, 0.866], dtype=np.float32),
    "budget": np.asarray([0.8, 0.6], dtype=np.float32),
    "budget-copy": np.asarray([0.8, 0.6], dtype=np.float32),
    "job": np.asarray([0.0, 1.0], dtype=np.float32),
    "retired": np.asarray([-0.28, 0.96], dtype=np.float32),
}


def unit(name: str, text: str, speaker: str, people: list[str]) -> MemoryUnit:
    return MemoryUnit(
        id=name, namespace="ns", text=f"{speaker}: {text}", people=people,
        provenance=Provenance(session_id="s", turn_ids=[name], speaker=speaker, session_time=DAY),
    )  # fmt: skip


UNITS = [
    unit("allergy", "I'm allergic to shellfish", "Maya", ["Maya"]),
    unit("chat", "We talked about the weather", "Maya", ["Maya"]),  # an episode
    unit("pregnant", "I'm seven months pregnant", "Maya", ["maya "]),
    unit("budget", "I'm on a tight budget for now", "Tom", ["Tom"]),
    unit("budget-copy", "I'm on a tight budget for now", "Tom", ["Tom"]),
    unit("unstored", "I can't eat gluten, I'm intolerant", "Tom", ["Tom"]),
]


def read(asked: list[list[str]]):  # type: ignore[no-untyped-def]
    def fetch(ids: list[str]) -> dict[str, np.ndarray]:
        asked.append(ids)
        return {i: VECTORS[i] for i in ids if i in VECTORS}

    return fetch


def test_ranks_the_named_peoples_facts_by_cosine_ties_by_id() -> None:
    index = Constraints.of(UNITS)
    assert [u.id for u in index.units] == [
        "allergy", "pregnant", "budget", "budget-copy", "unstored"
    ]  # fmt: skip
    query = np.asarray([1.0, 0.0], dtype=np.float32)
    asked: list[list[str]] = []
    maya = index.ranked({"maya"}, query, read(asked), 5)
    assert [(u.id, round(s, 4)) for u, s in maya] == [("allergy", 1.0), ("pregnant", 0.5)]
    everyone = index.ranked(set(), query, read(asked), 3)
    assert [u.id for u, _ in everyone] == ["allergy", "budget", "budget-copy"]
    assert [u.id for u, _ in index.ranked(set(), query, read(asked), 10)][-1] == "pregnant"
    assert index.ranked({"nobody"}, query, read(asked), 5) == []
    assert index.ranked(set(), query, read(asked), 0) == []
    assert len(asked) == 1, "vectors are read once"


def test_growth_reads_only_the_new_constraints_vectors() -> None:
    index = Constraints.of(UNITS[:2])
    asked: list[list[str]] = []
    query = np.asarray([0.0, 1.0], dtype=np.float32)
    assert Constraints.of([]).ranked(set(), query, read(asked), 5) == []
    assert [u.id for u, _ in index.ranked(set(), query, read(asked), 5)] == ["allergy"]
    index.extended(UNITS[2:])
    assert [u.id for u, _ in index.ranked(set(), query, read(asked), 1)] == ["pregnant"]
    assert asked == [["allergy"], ["pregnant", "budget", "budget-copy", "unstored"]]


def test_a_newer_change_takes_the_older_fact_of_the_same_attribute_out() -> None:
    job = unit("job", "I'm a baker at the corner shop", "Tom", ["Tom"])
    retired = unit("retired", "I retired in March and sold the shop", "Tom", ["Tom"])
    index = Constraints.of([*UNITS, job, retired])
    query = np.asarray([0.0, 1.0], dtype=np.float32)
    ranked = index.ranked({"tom"}, query, read([]), 10)
    assert [u.id for u, _ in ranked] == ["retired", "budget", "budget-copy"]
    assert index.superseded == {"job": "retired"}


def found(*ids: str) -> list[Found]:
    return [Found(memory=UNITS[0].model_copy(update={"id": i}), score=0.0, statement="", reason="")
            for i in ids]  # fmt: skip


def test_lifted_fills_the_window_up_to_k_standing_facts_over_unrelated_memories_only() -> None:
    facts = found("f1", "f2", "f3", "f4")
    window = ["w1", "f2", "w3", "w4"]
    # f2 is in view already; two more may come, and the window holds three unrelated memories
    assert lifted(facts, ["f2"], window, k=3, unrelated=3) == ["f1", "f3"]
    assert lifted(facts, ["f2"], window, k=3, unrelated=1) == ["f1"]  # only one may be pushed out
    assert lifted(facts, [], window, k=5, unrelated=0) == []  # everything in view is related
    assert lifted(facts, ["a", "b", "c"], window, k=3, unrelated=4) == []  # enough in view


def test_forgetting_a_change_lets_the_fact_it_superseded_stand_again() -> None:
    job = unit("job", "I'm a baker at the corner shop", "Tom", ["Tom"])
    retired = unit("retired", "I retired in March and sold the shop", "Tom", ["Tom"])
    every = [*UNITS, job, retired]
    query = np.asarray([0.0, 1.0], dtype=np.float32)
    for removed in (["retired"], ["job"], ["budget", "allergy"], ["chat"]):
        index = Constraints.of(every)
        index.ranked(set(), query, read([]), 10)  # every vector read before the forget
        asked: list[list[str]] = []
        index.without([u for u in every if u.id in removed])
        rebuilt = Constraints.of([u for u in every if u.id not in removed])
        assert [(u.id, round(s, 5)) for u, s in index.ranked(set(), query, read(asked), 10)] == [
            (u.id, round(s, 5)) for u, s in rebuilt.ranked(set(), query, read([]), 10)
        ]
        assert index.ranked({"tom"}, query, read(asked), 10) == rebuilt.ranked(
            {"tom"}, query, read([]), 10
        )
        assert index.superseded == rebuilt.superseded
        assert asked == [], "the kept facts' vectors are not read again"
