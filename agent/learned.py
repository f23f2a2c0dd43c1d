"""The learned ranker as it runs in recall: one additive shape per feature, read from a file.

The model is boosted one-split trees (LightGBM's LambdaRank with two leaves a tree, trained by
``ripplegraph bench ranker``), which add up to one step function per feature: a candidate's
score is the sum of its features' shapes, so each feature's part of the score is exact, and
that is what a kept memory shows as the reason it ranks where it does.  Scoring is a
``searchsorted`` per feature in numpy, in the recall process, with no import of LightGBM (whose
scikit-learn import alone would cost the command line a second).

Each shape is centred on the candidates it was trained on, so a contribution reads as "this
much above or below a typical pooled memory"; the centres are summed into ``bias``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from pydantic_core import CoreSchema, core_schema

from ripplegraph.agent.errors import InvalidValueError

FORMAT = "ripplegraph-additive-ranker/1"
SHIPPED = "ranker.json"
"""The file beside this module: the ranker trained on every development conversation."""
SHIPPED_WALKER = "walker.json"
"""The file beside this module: the walk model trained on every development conversation."""


@dataclass(frozen=True, eq=False)
class Shape:
    """One feature's part of the score: ``values[i]`` for ``thresholds[i-1] < x <= thresholds[i]``.

    The last value holds past the last threshold.
    """

    feature: str
    thresholds: np.ndarray
    values: np.ndarray

    def __call__(self, column: np.ndarray) -> np.ndarray:
        """The shape's value at each ``x`` of ``column``."""
        return self.values[np.searchsorted(self.thresholds, column, side="left")]


@dataclass(frozen=True, eq=False)
class Ranker:
    """An additive ranking model over named features (compared by identity: one per file)."""

    features: tuple[str, ...]
    shapes: tuple[Shape, ...]
    bias: float = 0.0
    about: dict[str, Any] = field(default_factory=dict)
    """How it was trained: the data, the parameters, the trees (written to the file as is)."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> CoreSchema:
        """Settings that hold a ranker (``Deployed.recall_settings``) take it as it is."""
        return core_schema.is_instance_schema(cls)

    def contributions(self, matrix: np.ndarray) -> np.ndarray:
        """Each candidate's (row's) score split by feature (columns in ``features`` order)."""
        return np.column_stack([shape(matrix[:, i]) for i, shape in enumerate(self.shapes)])

    def scores(self, matrix: np.ndarray) -> np.ndarray:
        """Each candidate's score: the bias plus its features' contributions."""
        if not len(matrix):
            return np.zeros(0)
        total: np.ndarray = self.bias + self.contributions(matrix).sum(axis=1)
        return total

    def to_json(self) -> str:
        """The file's text: deterministic (keys sorted, floats as Python writes them)."""
        body = {
            "format": FORMAT,
            "features": list(self.features),
            "bias": self.bias,
            "shapes": [
                {
                    "feature": s.feature,
                    "thresholds": [float(t) for t in s.thresholds],
                    "values": [float(v) for v in s.values],
                }
                for s in self.shapes
            ],
            "about": self.about,
        }
        return json.dumps(body, indent=1, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str, where: str = "ranker") -> Ranker:
        """A ranker from its file's text; a file of another format raises ``InvalidValueError``."""
        try:
            body = json.loads(text)
            if body.get("format") != FORMAT:
                raise ValueError(f"format {body.get('format')!r}, not {FORMAT!r}")
            shapes = tuple(
                Shape(
                    str(s["feature"]),
                    np.asarray(s["thresholds"], dtype=np.float64),
                    np.asarray(s["values"], dtype=np.float64),
                )
                for s in body["shapes"]
            )
            if any(len(s.values) != len(s.thresholds) + 1 for s in shapes):
                raise ValueError("a shape needs one value more than its thresholds")
            features = tuple(str(f) for f in body["features"])
            if features != tuple(s.feature for s in shapes):
                raise ValueError("one shape per feature, in order")
            return cls(features, shapes, float(body["bias"]), dict(body.get("about", {})))
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise InvalidValueError(f"{where}: not a RippleGraph ranker ({error})") from error

    @classmethod
    def read(cls, path: str | Path) -> Ranker:
        """A ranker from a file."""
        return cls.from_json(Path(path).read_text(encoding="utf-8"), str(path))

    def strongest(self, contributions: np.ndarray, top: int) -> list[dict[str, float]]:
        """Each candidate's (row's) ``top`` contributions largest in size, by feature name."""
        rows = np.asarray(contributions, dtype=np.float64).reshape(-1, len(self.features))
        order = np.argsort(-np.abs(rows), axis=1, kind="stable")[:, :top]
        picked = np.take_along_axis(rows, order, axis=1)
        return [
            {
                self.features[i]: value
                for i, x in zip(columns, row, strict=True)
                if (value := round(x, 4))
            }
            for columns, row in zip(order.tolist(), picked.tolist(), strict=True)
        ]


def from_stumps(
    features: Sequence[str],
    trees: Sequence[Mapping[str, Any]],
    rows: np.ndarray,
    about: dict[str, Any],
) -> Ranker:
    """The additive ranker equal to boosted one-split trees (LightGBM's ``dump_model`` trees).

    ``rows`` are the candidates trained on: each shape is centred on its mean over them.
    """
    splits: dict[int, list[tuple[float, float, float]]] = {i: [] for i in range(len(features))}
    constant = 0.0
    for tree in trees:
        node = tree["tree_structure"]
        if "leaf_value" in node:
            constant += float(node["leaf_value"])
            continue
        if node["decision_type"] != "<=" or "leaf_value" not in node["left_child"]:
            raise ValueError("not a one-split tree with a '<=' split")
        splits[int(node["split_feature"])].append(
            (
                float(node["threshold"]),
                float(node["left_child"]["leaf_value"]),
                float(node["right_child"]["leaf_value"]),
            )
        )
    shapes = []
    bias = constant
    for index, name in enumerate(features):
        thresholds = np.array(sorted({t for t, _, _ in splits[index]}), dtype=np.float64)
        probes = np.append(thresholds, np.inf)  # the largest x of each interval
        values = np.array(
            [sum(left if x <= t else right for t, left, right in splits[index]) for x in probes]
        )
        shape = Shape(name, thresholds, values)
        centre = float(shape(rows[:, index]).mean()) if len(rows) else 0.0
        shapes.append(Shape(name, thresholds, values - centre))
        bias += centre
    return Ranker(tuple(features), tuple(shapes), bias, about)


@cache
def shipped(name: str = SHIPPED) -> Ranker:
    """A model shipped in the package (trained on every development conversation).

    ``SHIPPED`` orders the evidence, ``SHIPPED_WALKER`` chooses what the walk keeps.
    """
    text = resources.files("ripplegraph.agent").joinpath(name).read_text(encoding="utf-8")
    return Ranker.from_json(text, name)
