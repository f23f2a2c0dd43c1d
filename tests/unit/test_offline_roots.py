"""Offline root units: standing facts grouped by whom and what, routed by person or rule."""

from __future__ import annotations

import numpy as np

from ripplegraph.agent.decisions.policies.roots import build_roots, grouped, route_roots
from ripplegraph.agent.memory import MemoryKind, MemoryUnit, Provenance
from ripplegraph.agent.state import QueryCues


def said(
    mid: str, text: str, kind: MemoryKind, people: list[str], speaker: str = "Sam"
) -> MemoryUnit:
    provenance = Provenance(session_id="s", speaker=speaker)
    return MemoryUnit(
        id=mid, namespace="ns", text=text, kind=kind, people=people, provenance=provenance
    )


UNITS = [
    said("m1", "Sam: Maya is allergic to shellfish", MemoryKind.STATE, ["Sam", "Maya"]),
    said("m2", "Sam: we talked about the weather", MemoryKind.EXPERIENCE, ["Sam"]),
    said("m3", "Sam: I'm training for a marathon", MemoryKind.GOAL, ["Sam"]),
    said("m4", "Sam: Maya is vegetarian now", MemoryKind.STATE, ["Maya", "Sam"]),
    said("m5", "Sam: I plan to move to Porto", MemoryKind.PLAN, ["Sam"]),
]


def test_standing_memories_group_by_subject_and_topic_episodes_do_not() -> None:
    groups = grouped({}, UNITS)
    assert {key: [m.id for m in members] for key, members in groups.items()} == {
        ("Maya", "current state and constraints"): ["m1", "m4"],
        ("Sam", "commitments and rules"): ["m3", "m5"],
    }
    grown = grouped(grouped({}, UNITS[:2]), UNITS[2:])
    assert grown == groups, "growing by new units equals grouping them all"


def test_the_largest_groups_become_rules_with_their_latest_evidence_first() -> None:
    roots = build_roots(grouped({}, UNITS), max_units=1, evidence=1)
    [root] = roots
    assert (root.person, root.topic, root.evidence_ids) == (
        "Maya",
        "current state and constraints",
        ["m4"],
    )
    assert root.rule == (
        "When a request involves Maya, respect Maya's current state and constraints: "
        "Sam: Maya is vegetarian now"
    )
    maya, sam = build_roots(grouped({}, UNITS), 10, 8)
    assert maya.id == root.id, "ids name (person, topic), not the evidence"
    assert (maya.evidence_ids, sam.evidence_ids) == (["m4", "m1"], ["m5", "m3"])
    sam, maya = build_roots(grouped({}, UNITS), 10, 8, superseded={"m4"})
    assert maya.evidence_ids == ["m1"], "a superseded fact is no evidence"


def test_a_decision_about_a_person_routes_their_rules_a_fact_question_does_not() -> None:
    roots = build_roots(grouped({}, UNITS), max_units=10, evidence=8)
    vectors = np.asarray([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)  # Maya's rule, Sam's rule
    query = np.asarray([0.6, 0.8], dtype=np.float32)
    advice = QueryCues(people=["maya"], decision=True)
    fact = QueryCues(people=["Maya"], decision=False)
    assert [(r.person, s) for r, s in route_roots(roots, vectors, advice, query, 0.9)] == [
        ("Maya", 0.6)
    ]
    assert route_roots(roots, vectors, fact, query, 0.9) == []
    # Close enough to its rule, a decision activates a unit; the closest comes first.
    assert [r.person for r, _ in route_roots(roots, vectors, advice, query, 0.7)] == ["Sam", "Maya"]
    # A factual question is answered by its memories, however close it is to a rule.
    assert route_roots(roots, vectors, fact, query, 0.5) == []


def test_a_first_person_decision_takes_the_closest_units_of_all() -> None:
    roots = build_roots(grouped({}, UNITS), max_units=10, evidence=8)
    vectors = np.asarray([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)  # Maya's rule, Sam's rule
    query = np.asarray([0.6, 0.8], dtype=np.float32)
    mine = QueryCues(decision=True, first_person=True)
    assert [r.person for r, _ in route_roots(roots, vectors, mine, query, 0.9, 1)] == ["Sam"]
    assert [r.person for r, _ in route_roots(roots, vectors, mine, query, 0.9, 2)] == [
        "Sam",
        "Maya",
    ]
    fact = QueryCues(decision=False, first_person=True)
    assert route_roots(roots, vectors, fact, query, 0.9, 2) == []
