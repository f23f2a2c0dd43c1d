"""The learned ranker's file: the additive model equals the trees it came from, and reads back."""

from __future__ import annotations

import numpy as np
import pytest

from ripplegraph.agent.decisions.policies.expansion import WALK_FEATURES
from ripplegraph.agent.decisions.policies.ranking import FEATURES
from ripplegraph.agent.errors import InvalidValueError
from ripplegraph.agent.learned import SHIPPED_WALKER, Ranker, Shape, from_stumps, shipped


def stump(feature: int, threshold: float, left: float, right: float) -> dict:
    return {
        "tree_structure": {
            "split_feature": feature,
            "threshold": threshold,
            "decision_type": "<=",
            "left_child": {"leaf_value": left},
            "right_child": {"leaf_value": right},
        }
    }


def test_stumps_add_up_to_one_step_function_per_feature() -> None:
    trees = [
        stump(0, 0.5, -1.0, 1.0),
        stump(0, 0.2, 0.5, 0.0),
        stump(1, 3.0, 0.0, 2.0),
        {"tree_structure": {"leaf_value": 0.25}},
    ]
    rows = np.array([[0.1, 1.0], [0.3, 5.0], [0.9, 3.0]])
    ranker = from_stumps(("a", "b"), trees, rows, {})
    expected = np.array([-1.0 + 0.5 + 0.0, -1.0 + 0.0 + 0.0, 1.0 + 0.0 + 0.0]) + 0.25
    expected += np.array([0.0, 2.0, 0.0])
    assert np.allclose(ranker.scores(rows), expected)
    # A threshold itself goes left, as LightGBM's "<=" sends it.
    assert np.allclose(ranker.scores(np.array([[0.5, 3.0]])), [-1.0 + 0.25])
    # Each shape is centred on the rows trained on: contributions read against a typical row.
    assert np.allclose(ranker.contributions(rows).mean(axis=0), 0.0)


def test_the_additive_model_scores_as_lightgbm_does() -> None:
    lightgbm = pytest.importorskip("lightgbm")
    generator = np.random.default_rng(0)
    rows = generator.normal(size=(600, 4))
    labels = (rows[:, 0] + 0.5 * rows[:, 2] > 0.8).astype(float)
    parameters = {"objective": "lambdarank", "num_leaves": 2, "verbose": -1, "num_threads": 1}
    booster = lightgbm.train(
        parameters, lightgbm.Dataset(rows, labels, group=[30] * 20), num_boost_round=40
    )
    ranker = from_stumps(("a", "b", "c", "d"), booster.dump_model()["tree_info"], rows, {})
    probe = generator.normal(size=(200, 4))
    assert np.allclose(ranker.scores(probe), booster.predict(probe), atol=1e-9)


def test_a_ranker_reads_back_from_its_text() -> None:
    ranker = Ranker(
        ("a",), (Shape("a", np.array([0.5]), np.array([-1.0, 1.0])),), 0.5, {"name": "t"}
    )
    text = ranker.to_json()
    again = Ranker.from_json(text)
    assert again.to_json() == text
    assert again.scores(np.array([[0.4], [0.6]])).tolist() == [-0.5, 1.5]
    assert again.strongest(np.array([-1.0]), 3) == [{"a": -1.0}]


def test_each_rows_strongest_reasons_are_its_own_largest_in_size_first() -> None:
    generator = np.random.default_rng(1)
    features = ("a", "b", "c", "d")
    ranker = Ranker(features, tuple(Shape(f, np.array([]), np.array([0.0])) for f in features))
    rows = generator.normal(size=(50, 4))
    rows[0] = [0.0, -2.0, 2.0, 0.00001]  # equal sizes keep feature order; a rounded zero drops
    reasons = ranker.strongest(rows, 3)
    assert reasons[0] == {"b": -2.0, "c": 2.0}
    for row, why in zip(rows, reasons, strict=True):
        top = np.argsort(-np.abs(row), kind="stable")[:3]
        assert why == {features[i]: round(float(row[i]), 4) for i in top if round(row[i], 4)}
    assert ranker.strongest(np.zeros((0, 4)), 3) == []


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        '{"format": "other"}',
        '{"format": "ripplegraph-additive-ranker/1", "features": ["a"], "bias": 0, "shapes": '
        '[{"feature": "a", "thresholds": [1], "values": [1]}]}',
        '{"format": "ripplegraph-additive-ranker/1", "features": ["b"], "bias": 0, "shapes": '
        '[{"feature": "a", "thresholds": [], "values": [1]}]}',
    ],
)
def test_another_file_is_refused_by_name(text: str) -> None:
    with pytest.raises(InvalidValueError, match="not a RippleGraph ranker"):
        Ranker.from_json(text, "odd.json")


def test_the_shipped_ranker_knows_the_features_recall_computes() -> None:
    ranker = shipped()
    assert ranker.features == FEATURES
    assert len(ranker.to_json().encode()) < 1_000_000
    assert ranker.about["conversations"], "trained on named conversations"


def test_the_shipped_walk_model_knows_the_features_the_walk_computes() -> None:
    walker = shipped(SHIPPED_WALKER)
    assert walker.features == WALK_FEATURES
    assert len(walker.to_json().encode()) < 1_000_000
    assert len(walker.about["conversations"]) > 1, "trained on named conversations"


def test_a_walk_model_trains_to_the_same_file_twice_and_not_from_nothing() -> None:
    pytest.importorskip("lightgbm")
    from ripplegraph.agent.eval.conversations import LocomoData, Question
    from ripplegraph.agent.eval.names import Leave
    from ripplegraph.agent.eval.ranker import Walked, fold_of, train_walker, walk_folds

    def walks() -> list[Walked]:
        generator = np.random.default_rng(3)
        found = []
        for index in range(40):
            rows = generator.normal(size=(25, len(WALK_FEATURES)))
            labels = (rows[:, 3] + 0.3 * rows[:, 4] > 1.0).astype(float)
            found.append(Walked(f"conv-{index % 4}", rows, labels))
        return found

    first, second = train_walker(walks(), {"name": "t"}), train_walker(walks(), {"name": "t"})
    assert first is not None and second is not None
    assert first.to_json() == second.to_json()
    assert first.about["conversations"] == ["conv-0", "conv-1", "conv-2", "conv-3"]
    assert first.about["walks"] == 40
    # Each fold's model never saw the conversation it is judged on.
    folds = walk_folds(walks(), {f"conv-{i}": f"conv-{i}" for i in range(4)})
    assert [(held, m.about["conversations"]) for held, m in folds.items() if m] == [
        ("conv-0", ["conv-1", "conv-2", "conv-3"]),
        ("conv-1", ["conv-0", "conv-2", "conv-3"]),
        ("conv-2", ["conv-0", "conv-1", "conv-3"]),
        ("conv-3", ["conv-0", "conv-1", "conv-2"]),
    ]
    assert folds["conv-0"] and folds["conv-0"].about["walks"] == 30
    # Left out by kind, a fold's model never saw a conversation of its kind; a conversation
    # without questions is in no fold.
    data = LocomoData(
        sessions={"conv-0": [], "conv-1": [], "idle": []},
        questions=[Question("conv-1", "q", "multi-hop", []), Question("conv-0", "q", "x", [])],
        sets={"conv-0": "a", "conv-1": "b", "idle": "a"},
    )
    assert fold_of(data, Leave.CONVERSATION) == {"conv-0": "conv-0", "conv-1": "conv-1"}
    assert fold_of(data, Leave.KIND) == {"conv-0": "a", "conv-1": "b"}
    kinds = walk_folds(walks(), {"conv-0": "a", "conv-1": "a", "conv-2": "b", "conv-3": "b"})
    assert {held: m.about["conversations"] for held, m in kinds.items() if m} == {
        "a": ["conv-2", "conv-3"],
        "b": ["conv-0", "conv-1"],
    }
    nothing = [Walked("conv-0", np.zeros((3, len(WALK_FEATURES))), np.zeros(3))]
    assert train_walker(nothing) is None, "no walk reached gold: the walk stays by hand"
