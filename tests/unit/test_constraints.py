"""Standing constraints ranked against a question: people filter, state bonus, ties, growth."""

from __future__ import annotations

from datetime import datetime

import numpy as np

from agent.memory import MemoryKind, MemoryUnit, Provenance
from agent.policies.counterfactual import Constraints

DAY = datetime(2024, 5, 1)
VECTORS = {
    "allergy": np.asarray([1.0, 0.0], dtype=np.float32),
    "pregnant": np.asarray([0.5, 0.866], dtype=np.float32),
    "budget": np.asarray([0.8, 0.6], dtype=np.float32),
    "budget-copy": np.asarray([0.8, 0.6], dtype=np.float32),
}


def unit(
    name: str, text: str, people: list[str], kind: MemoryKind = MemoryKind.EXPERIENCE
) -> MemoryUnit:
    return MemoryUnit(
        id=name, namespace="ns", text=text, people=people, kind=kind,
        provenance=Provenance(session_id="s", turn_ids=[name], speaker="U", session_time=DAY),
    )  # fmt: skip


UNITS = [
    unit("allergy", "Maya is allergic to shellfish", ["Maya"]),
    unit("chat", "We talked about the weather", ["Maya"]),  # not a constraint
    unit("pregnant", "Maya is seven months pregnant", ["maya "], MemoryKind.STATE),
    unit("budget", "Tom is on a tight budget", ["Tom"]),
    unit("budget-copy", "Tom is on a tight budget", ["Tom"]),
    unit("unstored", "Tom cannot eat gluten", ["Tom"]),
]


def read(asked: list[list[str]]):  # type: ignore[no-untyped-def]
    def fetch(ids: list[str]) -> dict[str, np.ndarray]:
        asked.append(ids)
        return {i: VECTORS[i] for i in ids if i in VECTORS}

    return fetch


def test_ranks_the_named_peoples_constraints_states_first_ties_by_id() -> None:
    index = Constraints.of(UNITS)
    assert [u.id for u in index.units] == [
        "allergy", "pregnant", "budget", "budget-copy", "unstored"
    ]  # fmt: skip
    query = np.asarray([1.0, 0.0], dtype=np.float32)
    asked: list[list[str]] = []
    maya = index.ranked({"maya"}, query, read(asked), 5)
    # pregnant: 0.5 + 0.2 for a state memory, under the allergy's 1.0.
    assert [(u.id, round(s, 4)) for u, s in maya] == [("allergy", 1.0), ("pregnant", 0.7)]
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
