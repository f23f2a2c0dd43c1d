"""The best k of a score array: a stable sort's top k, whatever numpy's partition picks."""

from __future__ import annotations

import timeit

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ripplegraph.agent.store.lexical import Bm25, ranked
from ripplegraph.agent.store.top import best
from ripplegraph.agent.store.vector_layout import nearest


@settings(max_examples=200, deadline=None)
@given(
    scores=st.lists(st.integers(0, 4), min_size=0, max_size=60),  # few values: many ties
    k=st.integers(-1, 70),
)
def test_the_best_k_are_a_stable_sorts_top_k(scores: list[int], k: int) -> None:
    array = np.asarray(scores, dtype=np.float64) / 4
    expected = sorted(range(len(scores)), key=lambda i: (-array[i], i))[: max(k, 0)]
    assert best(array, k) == expected


@settings(max_examples=200, deadline=None)
@given(
    scores=st.lists(st.sampled_from([0, 0, 0, 0, 0, 0, 1, 2, 3]), min_size=1, max_size=80),
    k=st.integers(1, 80),
)
def test_mostly_one_value_still_gives_a_stable_sorts_top_k(scores: list[int], k: int) -> None:
    # BM25's scores are mostly zeros: the k-th value is then selected among the rest.
    array = np.asarray(scores, dtype=np.float32) / 3
    expected = sorted(range(len(scores)), key=lambda i: (-array[i], i))[:k]
    assert best(array, k) == expected


def test_mostly_zeros_cost_no_more_than_distinct_scores() -> None:
    # numpy's selection on an array most of which is one value can take 20x as long (BM25's
    # scores at 100k memories: 9 ms a query, against 0.6 for distinct cosines).
    rng = np.random.default_rng(0)
    sparse = np.zeros(100_000)  # a query whose terms 5% of the memories hold
    sparse[rng.choice(100_000, 5_000, replace=False)] = rng.random(5_000) * 10
    dense = rng.random(100_000)
    seconds = {
        name: min(timeit.repeat(lambda scores=scores: best(scores, 15), number=3, repeat=5))
        for name, scores in (("sparse", sparse), ("dense", dense))
    }
    assert seconds["sparse"] < 3 * seconds["dense"], seconds


def test_a_tie_at_the_cut_goes_to_the_lower_index() -> None:
    # Equal scores straddle the k-th place; which of them numpy's selection keeps is its own.
    scores = np.asarray([0.5] * 40 + [0.9] + [0.5] * 40, dtype=np.float32)
    assert best(scores, 3) == [40, 0, 1]
    assert best(scores[::-1].copy(), 3) == [40, 0, 1]


def test_searches_cut_ties_by_position() -> None:
    ids = [f"m{i:02d}" for i in range(30)]
    same = np.tile(np.asarray([[1.0, 0.0]], dtype=np.float32), (30, 1))
    found = nearest(ids, same, np.asarray([[1.0, 0.0]]), 4)
    assert [mid for mid, _ in found[0]] == ids[:4], "identical vectors: the first written first"
    index = Bm25()
    for mid in ids:
        index.add(mid, ["maya", "likes", "harbor"])
    for filler in range(40):  # a rare word scores above zero
        index.add(f"f{filler}", ["the", "cat", "sleeps"])
    assert [mid for mid, _ in ranked(index, "harbor", 4)] == ids[:4]
