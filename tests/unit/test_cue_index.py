"""The cue index on its own: shared cues counted, ties by time then write order, no model."""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np

from ripplegraph.agent.memory import MemoryUnit, Provenance, TimeInterval
from ripplegraph.agent.store.cue_index import CueIndex

DAY = datetime(2024, 5, 1)


def unit(name: str, people: list[str], places: list[str], day: int | None) -> MemoryUnit:
    interval = None
    if day is not None:
        start = DAY + timedelta(days=day)
        interval = TimeInterval(start=start, end=start + timedelta(days=1))
    return MemoryUnit(
        id=name, namespace="ns", text=name, people=people, places=places, time=interval,
        provenance=Provenance(session_id="s", turn_ids=[name], speaker="U", session_time=DAY),
    )  # fmt: skip


UNITS = [
    unit("a", ["Maya"], [], 0),
    unit("b", ["Maya", "Tom"], ["Porto"], 30),
    unit("c", ["Tom"], ["Porto"], 2),
    unit("d", [], [], None),
    unit("e", ["maya "], [], 1),
]


def test_shared_cues_rank_first_then_nearest_in_time_then_write_order() -> None:
    index = CueIndex.of(UNITS)
    found = index.matches(["Maya", "Tom"], ["porto"], None, k=10)
    assert [(m.unit_id, m.shared) for m in found] == [("b", 3), ("c", 2), ("a", 1), ("e", 1)]
    around = TimeInterval(start=DAY + timedelta(days=1), end=DAY + timedelta(days=2))
    near = index.matches(["Maya"], [], around, k=10, window_days=3)
    assert [(m.unit_id, m.shared) for m in near] == [("e", 2), ("a", 2), ("c", 1), ("b", 1)]
    assert near[0].time_distance_days == 0.0 and near[1].time_distance_days == 1.0


def test_exclusion_limits_and_growth() -> None:
    index = CueIndex.of(UNITS[:2])
    assert [m.unit_id for m in index.matches(["Maya"], [], None, k=1)] == ["a"]
    assert [m.unit_id for m in index.matches(["Maya"], [], None, k=5, exclude="a")] == ["b"]
    index.extended(UNITS[2:])
    assert [m.unit_id for m in index.matches([], ["Porto"], None, k=5)] == ["b", "c"]
    assert index.matches(["Nobody"], [], None, k=5) == []
    assert index.matches([], [], None, k=5) == []


def test_query_closeness_breaks_shared_cue_ties_among_the_candidates_only() -> None:
    index = CueIndex.of(UNITS)
    near = {"a": 0.1, "b": 0.9, "c": 0.5, "e": 0.7}
    closeness = lambda ids: np.asarray([near[i] for i in ids])  # noqa: E731
    found = index.matches(["Maya", "Tom"], [], None, k=3, closeness=closeness, candidates=10)
    assert [(m.unit_id, m.shared) for m in found] == [("b", 2), ("e", 1), ("c", 1)]
    # Only the first three in index order (b, then a and c by write order) are re-ranked:
    # e, the closest of the single-cue matches, is not among them.
    found = index.matches(["Maya", "Tom"], [], None, k=2, closeness=closeness, candidates=3)
    assert [m.unit_id for m in found] == ["b", "c"]


def test_closeness_is_asked_only_of_units_that_can_reach_the_top_k() -> None:
    rng = np.random.default_rng(3)
    names = ["Maya", "Tom", "Ana", "Lee"]
    units = [
        unit(f"u{i:03d}", [n for n in names if rng.random() < 0.4], [], int(rng.integers(0, 60)))
        for i in range(300)
    ]
    index = CueIndex.of(units)
    near = {u.id: float(rng.random()) for u in units}
    asked: list[list[str]] = []
    spared = 0

    def closeness(ids: list[str]) -> np.ndarray:
        asked.append(list(ids))
        return np.asarray([near[i] for i in ids])

    for people, k, candidates in ((names[:2], 5, 100), (names, 8, 300), (names[1:], 40, 60)):
        asked.clear()
        found = index.matches(people, [], None, k=k, closeness=closeness, candidates=candidates)
        # What re-ranking every one of the first ``candidates`` matches gives.
        first = index.matches(people, [], None, k=candidates)
        expected = sorted(first, key=lambda m: (-m.shared, -near[m.unit_id], m.unit_id))[:k]
        assert [m.unit_id for m in found] == [m.unit_id for m in expected]
        kth = first[min(k, len(first)) - 1].shared
        assert asked == [[m.unit_id for m in first if m.shared >= kth]]
        spared += len(first) - len(asked[0])
    assert spared > 0


def test_a_shrunk_index_matches_one_built_without_the_removed_units() -> None:
    around = TimeInterval(start=DAY, end=DAY + timedelta(days=2))
    for removed in (["b"], ["a", "e"], ["c", "d"]):
        shrunk = CueIndex.of(UNITS).without([u for u in UNITS if u.id in removed])
        assert shrunk is not None
        rebuilt = CueIndex.of([u for u in UNITS if u.id not in removed])
        for people, places, interval in (
            (["Maya", "Tom"], ["Porto"], None),
            (["Maya"], [], around),
        ):
            assert shrunk.matches(people, places, interval, k=10) == rebuilt.matches(
                people, places, interval, k=10
            )
    gone = CueIndex.of(UNITS).without(UNITS[:3])
    assert gone is None, "more empty slots than full ones: rebuilt instead"
