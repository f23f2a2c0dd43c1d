"""The benchmark metrics every headline number rests on: the cut-off K must matter."""

from __future__ import annotations

import pytest

from ripplegraph.agent.eval.imlogic import above_distractor
from ripplegraph.agent.eval.metrics import all_at, hit_at, mean, percentiles, recall_at

RANKED = ["a", "b", "c", "d", "e", "f"]


def test_recall_counts_only_gold_within_the_cut_off() -> None:
    assert recall_at(RANKED, ["b", "e"], 1) == 0.0
    assert recall_at(RANKED, ["b", "e"], 2) == 0.5
    assert recall_at(RANKED, ["b", "e"], 4) == 0.5
    assert recall_at(RANKED, ["b", "e"], 5) == 1.0
    assert recall_at(RANKED, ["b", "b", "e"], 2) == 0.5  # gold counted once
    assert recall_at(RANKED, ["z"], 6) == 0.0
    assert recall_at(RANKED, [], 6) == 0.0


def test_all_needs_every_gold_item_within_the_cut_off() -> None:
    assert all_at(RANKED, ["a", "d"], 3) == 0.0
    assert all_at(RANKED, ["a", "d"], 4) == 1.0
    assert all_at(RANKED, ["a", "b"], 2) == 1.0  # the top K is exactly the gold set
    assert all_at(RANKED, ["a", "z"], 6) == 0.0
    assert all_at(RANKED, [], 6) == 0.0


def test_hit_is_the_single_gold_item_within_the_cut_off() -> None:
    assert hit_at(RANKED, "e", 4) == 0.0
    assert hit_at(RANKED, "e", 5) == 1.0
    assert hit_at(RANKED, "z", 6) == 0.0


def test_above_distractor_ranks_unretrieved_memories_last() -> None:
    assert above_distractor(["l", "s"], "l", "s") == 1.0
    assert above_distractor(["s", "l"], "l", "s") == 0.0
    assert above_distractor(["x", "l"], "l", "s") == 1.0
    assert above_distractor(["s", "x"], "l", "s") == 0.0
    assert above_distractor([], "l", "s") == 0.0


def test_summaries() -> None:
    assert mean([1.0, 0.0, 0.0]) == pytest.approx(0.3333)
    assert mean([]) == 0.0
    assert percentiles([10.0, 20.0, 30.0, 40.0]) == {"p50": 25.0, "p95": 38.5}
    assert percentiles([1.04, 2.0, 2.26]) == {"p50": 2.0, "p95": 2.2}  # 0.1 ms, as reported
    assert percentiles([1.0, 2.11, 3.0]) == {"p50": 2.1, "p95": 2.9}
    assert percentiles([]) == {"p50": 0.0, "p95": 0.0}
