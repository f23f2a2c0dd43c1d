"""The folds bench's maths: variants from the command line, the rule, leave-one-out choice."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from ripplegraph.agent.context import Deployed, resolve_context
from ripplegraph.agent.eval import folds as folds_module
from ripplegraph.agent.eval.conversations import LocomoData
from ripplegraph.agent.eval.folds import (
    against,
    leave_one_out,
    paired,
    run_folds,
    total,
    variants,
)
from ripplegraph.agent.recall_config import FULL

COUNTS = {"a": 10, "b": 10, "c": 10, "d": 10, "e": 10}


def test_each_value_of_a_setting_is_one_variant_off_the_full_recipe() -> None:
    found = {v.name: v for v in variants(["max_anchors=2,5", "hops=1,9", "roots=false"])}
    assert list(found) == ["max_anchors=2", "max_anchors=5", "hops=1", "hops=3", "roots=false"]
    assert found["max_anchors=5"].settings == replace(FULL, max_anchors=5)
    assert found["max_anchors=5"].limits == {}
    assert found["hops=3"].settings == FULL  # 9 brought into the limit's range, 1-3
    assert found["hops=3"].limits == {"hops": 3}
    assert found["roots=false"].settings.roots is False
    assert [v.name for v in variants(["hops=3,9"])] == ["hops=3"]  # one run per setting


def test_fields_joined_by_a_plus_are_one_variant() -> None:
    (joint,) = variants(["rounds=9+spread_anchors=true+max_anchors=2"])
    assert joint.name == "rounds=3+spread_anchors=true+max_anchors=2"
    assert joint.settings == replace(FULL, spread_anchors=True, max_anchors=2)
    assert joint.limits == {"rounds": 3}


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("rounds=1,2+hops=1", "one value for each field"),
        ("rounds=1+typo=2", "cannot vary 'typo'"),
        ("weights=1", "cannot vary 'weights'"),
        ("typo=1", "choose from"),
        ("max_anchors=1.5", "not an int"),
        ("lambda_query=high", "not a number"),
        ("roots=2", "not true or false"),
        ("top_n_per_channel=-1", "below 0"),
    ],
)
def test_a_bad_variation_is_refused_by_name(spec: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        variants([spec])


def test_the_total_is_the_share_of_every_question_found() -> None:
    assert total({"a": 3, "b": 0}, {"a": 3, "b": 1}, ["a", "b"]) == 0.75
    assert total({"a": 3, "b": 0}, {"a": 3, "b": 1}, ["b"]) == 0.0


def test_a_variant_counts_when_it_helps_on_four_of_five_and_the_total() -> None:
    full = dict.fromkeys(COUNTS, 5)
    four = {**full, "a": 6, "b": 6, "c": 6, "d": 6}
    assert against(four, full, COUNTS) == {"helps": 4, "hurts": 0, "gain": 0.08, "counts": True}
    # A large gain on a few conversations is what fitting them looks like: it does not count.
    two = {**full, "a": 9, "b": 9, "c": 4}
    assert against(two, full, COUNTS)["counts"] is False
    # Helping on four but losing more on the fifth does not count either.
    lossy = {**four, "e": 0}
    assert against(lossy, full, COUNTS)["counts"] is False


def test_each_fold_chooses_on_the_others_and_scores_the_one_left_out() -> None:
    found = {
        "full": dict.fromkeys(COUNTS, 5),
        "fits_a": {**dict.fromkeys(COUNTS, 4), "a": 10},  # best overall, through "a" only
        "steady": dict.fromkeys(COUNTS, 6),
    }
    folds = {f["held_out"]: f for f in leave_one_out(found, COUNTS)}
    assert folds["a"]["chosen"] == "steady"  # without "a", fits_a is the worst
    assert folds["a"]["score"] == 0.6
    found["fits_a"]["a"] = 20
    folds = {f["held_out"]: f for f in leave_one_out(found, {**COUNTS, "a": 20})}
    assert folds["b"]["chosen"] == "fits_a"  # chosen through "a", then scored on "b"
    assert folds["b"]["score"] == 0.4


def test_a_tie_keeps_the_incumbent() -> None:
    found = {"another": dict.fromkeys(COUNTS, 5), "full": dict.fromkeys(COUNTS, 5)}
    assert {f["chosen"] for f in leave_one_out(found, COUNTS)} == {"full"}
    # Counts, not rounded shares: one question more on one side, one fewer on the other.
    found["another"] = {**found["full"], "a": 4, "b": 6}
    assert {f["chosen"] for f in leave_one_out(found, COUNTS)} == {"full", "another"}
    assert [f["chosen"] for f in leave_one_out(found, COUNTS)][2:] == ["full"] * 3


def test_settings_in_place_of_a_recipe_are_code_s_choice_only() -> None:
    tuned = Deployed(recall_settings=replace(FULL, max_anchors=2))
    assert tuned.recall_config().max_anchors == 2
    assert tuned.model_copy(update={"recall_recipe": "no_roots"}).recall_config().max_anchors == 2
    assert Deployed(recall_recipe="no_roots").recall_config().roots is False
    # A served run's context arrives as a mapping: settings in it are not a run's choice.
    served = resolve_context({"recall_settings": {"max_anchors": 50}, "namespace": "n"})
    assert served.recall_config() == FULL


def test_each_variant_runs_under_its_own_settings_and_limits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[tuple[str, ...], Any, int]] = []

    def run_locomo(data: Any, context: Deployed, systems: tuple[str, ...], advance: Any) -> Any:
        seen.append((systems, context.recall_settings, context.recall.hops))
        # conv-a: the full graph finds its question; a variant that walks less does not.
        found = ["D1:1"] if context.recall.hops > 1 or systems[0] == "first_hop" else []
        details = [
            {"namespace": ns, "category": "multi-hop", "gold": ["D1:1"], "retrieved": found}
            for ns in ("conv-a", "conv-b")
        ]
        scores = {"latency_ms": {"p50": 1.0}}
        return {
            "systems": dict.fromkeys(systems, scores),
            "details": dict.fromkeys(systems, details),
        }

    monkeypatch.setattr(folds_module, "run_locomo", run_locomo)
    tuned = variants(["hops=1", "max_anchors=2"])
    results = run_folds(LocomoData(sessions={}, questions=[]), Deployed(), tuned)
    assert seen == [
        (("first_hop", "ripplegraph"), None, 2),
        (("ripplegraph",), FULL, 1),
        (("ripplegraph",), replace(FULL, max_anchors=2), 2),
    ]
    assert results["systems"]["hops=1"]["conversations"] == {"conv-a": 0.0, "conv-b": 0.0}
    assert results["systems"]["hops=1"]["against_full"]["hurts"] == 2
    assert {f["chosen"] for f in results["folds"]} == {"full"}


def test_paired_counts_the_questions_only_one_side_found() -> None:
    candidate = {("a", 0): True, ("a", 1): False, ("b", 2): True, ("b", 3): False}
    baseline = {("a", 0): True, ("a", 1): True, ("b", 2): False, ("b", 3): False}
    assert paired(candidate, baseline) == {"wins": 1, "losses": 1}
    assert paired(baseline, baseline) == {"wins": 0, "losses": 0}
