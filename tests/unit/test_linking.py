import math
from datetime import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ripplegraph.agent.decisions.linking import LinkingConfig, select_edges, structural_similarity
from ripplegraph.agent.memory import MemoryUnit, Provenance, TimeInterval

CONFIG = LinkingConfig()


def unit(people=(), places=(), day: int | None = None) -> MemoryUnit:
    return MemoryUnit(
        id=f"m{people}{places}{day}",
        namespace="ns",
        text="x",
        people=list(people),
        places=list(places),
        time=TimeInterval.day_of(datetime(2024, 5, day)) if day else None,
        provenance=Provenance(session_id="s"),
    )


def test_identical_cues_score_one() -> None:
    a = unit(["Maya"], ["Harbor Grill"], 1)
    assert structural_similarity(a, unit(["maya"], ["harbor grill"], 1), CONFIG) == 1.0


def test_weights_renormalise_over_comparable_cues() -> None:
    # Only people are comparable: the score is their Jaccard overlap, not diluted.
    assert structural_similarity(unit(["A", "B"]), unit(["B"], ["Park"]), CONFIG) == 0.5
    # People (0.5 weight, Jaccard 1/3) and time (0.3 weight, same day = 1).
    score = structural_similarity(unit(["A", "B"], day=3), unit(["B", "C"], day=3), CONFIG)
    assert score == pytest.approx((0.5 / 3 + 0.3) / 0.8)


def test_time_decays_with_tau_seven_days() -> None:
    score = structural_similarity(unit(day=1), unit(day=9), CONFIG)
    assert score == pytest.approx(math.exp(-7 / 7))


def test_no_comparable_cue_gives_no_score() -> None:
    assert structural_similarity(unit(["A"]), unit(places=["Park"]), CONFIG) is None


def test_greedy_prefers_strong_edges_and_bounds_degree() -> None:
    candidates = {
        ("a", n): w for n, w in zip("bcdefgh", (0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3), strict=True)
    }
    remove, add = select_edges(candidates, {}, {}, max_degree=3)
    assert remove == set()
    assert add == {("a", "b"): 0.9, ("a", "c"): 0.8, ("a", "d"): 0.7}


def test_strong_new_edge_displaces_weakest_existing() -> None:
    existing = {("a", "x"): 0.5, ("a", "y"): 0.6}
    remove, add = select_edges({("a", "z"): 0.9}, existing, {}, max_degree=2)
    assert remove == {("a", "x")}
    assert add == {("a", "z"): 0.9}


def test_outside_degree_counts() -> None:
    remove, add = select_edges({("a", "b"): 0.9}, {}, {"b": 2}, max_degree=2)
    assert add == {} and remove == set()


nodes = st.sampled_from(list("abcdefghij"))


@given(
    st.dictionaries(
        st.tuples(nodes, nodes).filter(lambda p: p[0] < p[1]),
        st.floats(min_value=0.0, max_value=1.0),
    ),
    st.integers(min_value=1, max_value=6),
)
def test_every_node_keeps_at_most_max_degree(candidates, max_degree) -> None:
    _, add = select_edges(candidates, {}, {}, max_degree)
    degree: dict[str, int] = {}
    for a, b in add:
        degree[a] = degree.get(a, 0) + 1
        degree[b] = degree.get(b, 0) + 1
    assert all(d <= max_degree for d in degree.values())
    # Maximality: an unkept candidate has a full endpoint.
    for a, b in candidates.keys() - add.keys():
        assert degree.get(a, 0) == max_degree or degree.get(b, 0) == max_degree
