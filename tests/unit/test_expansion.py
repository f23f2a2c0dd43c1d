"""Local expansion over typed edges and the pool merge, on a hand-built graph, no model."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import numpy as np

from ripplegraph.agent.decisions.policies.expansion import (
    WALK_FEATURES,
    WalkModel,
    cue_match,
    expand,
    target_cues,
    walk,
    walk_table,
    walked_types,
)
from ripplegraph.agent.learned import Ranker, Shape
from ripplegraph.agent.memory import MemoryUnit, Provenance
from ripplegraph.agent.recall_config import FULL, RECIPES
from ripplegraph.agent.state import Evidence, EvidenceSource, Plan, merge_pool
from ripplegraph.agent.store import DIALOGUE, SEMANTIC, STRUCTURAL, Edge


def unit(mid: str, text: str) -> MemoryUnit:
    return MemoryUnit(id=mid, namespace="ns", text=text, provenance=Provenance(session_id="s"))


class Graph:
    """The three store reads expansion makes, over a few units (edges stored both ways)."""

    def __init__(self, edges: list[Edge], vectors: dict[str, list[float]]) -> None:
        self.edges = edges + [Edge(e.dst, e.src, e.type, e.weight) for e in edges]
        self.units = {mid: unit(mid, f"memory {mid}") for mid in vectors}
        self.units["harbor"] = unit("harbor", "dinner at the harbor grill")
        self.vectors = {mid: np.asarray(v, dtype=np.float32) for mid, v in vectors.items()}

    def neighbours(self, namespace: str, ids: Iterable[str], types: Iterable[str]) -> list[Edge]:
        wanted, kinds = set(ids), set(types)
        found = [e for e in self.edges if e.src in wanted and e.type in kinds]
        return sorted(found, key=lambda e: (-e.weight, e.dst))

    def get(self, namespace: str, ids: Iterable[str]) -> dict[str, MemoryUnit]:
        return {mid: self.units[mid] for mid in ids if mid in self.units}

    def embeddings(self, namespace: str, ids: Iterable[str]) -> dict[str, np.ndarray]:
        return {mid: self.vectors[mid] for mid in ids if mid in self.vectors}


VECTORS = {"a": [1, 0], "b": [0.6, 0.8], "c": [1, 0], "d": [0, 1], "harbor": [0.8, 0.6]}
EDGES = [
    Edge("a", "b", SEMANTIC, 0.9),
    Edge("b", "c", STRUCTURAL, 0.7),
    Edge("a", "d", SEMANTIC, 0.8),
    Edge("a", "harbor", STRUCTURAL, 0.5),
    Edge("a", "harbor", SEMANTIC, 0.6),
]
TARGET = np.asarray([1.0, 0.0], dtype=np.float32)


def run(
    plan: Plan, hops: int, top_n: int = 5, exclude: Iterable[str] = ()
) -> list[tuple[object, ...]]:
    graph = Graph(EDGES, VECTORS)
    reached = expand(graph, "ns", plan, TARGET, set(exclude), hops=hops, top_n=top_n)  # type: ignore[arg-type]
    return [
        (r.memory.id, r.channel, r.path, r.edges, r.strength, round(r.score, 3)) for r in reached
    ]


def test_the_walk_keeps_its_path_edge_types_and_weakest_link() -> None:
    assert [r[0] for r in run(Plan(anchors=["a"]), hops=1)] == ["harbor", "b", "d"]
    reached = {r[0]: r for r in run(Plan(anchors=["a"]), hops=2)}
    assert reached["c"] == ("c", STRUCTURAL, ["a", "b", "c"], [SEMANTIC, STRUCTURAL], 0.7, 1.0)
    assert "a" not in reached, "an anchor is never a candidate"


def test_a_memory_reached_by_two_channels_is_kept_once() -> None:
    reached = run(Plan(anchors=["a"]), hops=1)
    assert [r[0] for r in reached].count("harbor") == 1
    assert reached[0][:2] == ("harbor", SEMANTIC)  # channels in order; the first keeps it


def test_the_target_cues_add_to_similarity_and_top_n_is_per_channel() -> None:
    plan = Plan(anchors=["a"], target_places=["Harbor"], target_terms=["grill"])
    assert cue_match(unit("x", "dinner at the harbor grill"), target_cues(plan)) == 1.0
    assert cue_match(unit("x", "a quiet night in"), target_cues(plan)) == 0.0
    reached = run(plan, hops=1, top_n=1)
    # harbor: 0.8 cosine + 1.0 cues, best of both channels; d only stays if its channel keeps it.
    assert [(r[0], r[5]) for r in reached] == [("harbor", 1.8)]
    assert [r[0] for r in run(plan, hops=1, top_n=1, exclude=["harbor"])] == ["b"]


def test_merge_pool_accumulates_sources_once_and_keeps_the_flags() -> None:
    first = EvidenceSource(channel="semantic", rank=1, score=0.9)
    second = EvidenceSource(channel="expansion", rank=2, score=0.5, path=["a", "b"], round=1)
    left = {"b": Evidence(memory=unit("b", "x"), sources=[first], anchor=True, score=0.4)}
    right = {
        "b": Evidence(memory=unit("b", "x"), sources=[first, second], score=0.0),
        "c": Evidence(memory=unit("c", "y"), sources=[second]),
    }
    merged = merge_pool(left, right)
    assert merged["b"].sources == [first, second]
    assert merged["b"].anchor and merged["b"].score == 0.4  # a zero score does not overwrite
    assert (
        merge_pool(merged, {"b": merged["b"].model_copy(update={"score": 0.7})})["b"].score == 0.7
    )
    assert list(merged) == ["b", "c"]
    lifted = {"c": Evidence(memory=unit("c", "y"), sources=[first], standing=True)}
    assert merge_pool(lifted, right)["c"].standing and merge_pool(right, lifted)["c"].standing


def test_the_walk_follows_the_types_the_settings_switch_on() -> None:
    assert walked_types(FULL) == (SEMANTIC, STRUCTURAL, DIALOGUE)
    assert walked_types(replace(FULL, dialogue_edges=False)) == (SEMANTIC, STRUCTURAL)
    assert walked_types(RECIPES["no_structural"]) == (SEMANTIC, DIALOGUE)


def test_a_dialogue_neighbour_is_a_channel_of_its_own() -> None:
    """The turn beside an anchor competes with other turns beside the walk, not with the rest."""
    edges = [*EDGES, Edge("a", "e", DIALOGUE, 1.0), Edge("b", "f", DIALOGUE, 1.0)]
    graph = Graph(edges, {**VECTORS, "e": [0, 1], "f": [0.6, 0.8]})
    plan = Plan(anchors=["a"])
    types = walked_types(FULL)
    reached = expand(graph, "ns", plan, TARGET, set(), hops=2, top_n=1, edge_types=types)  # type: ignore[arg-type]
    by_id = {r.memory.id: r for r in reached}
    assert by_id["f"].channel == DIALOGUE and by_id["f"].edges == [SEMANTIC, DIALOGUE]
    assert "e" not in by_id, "only the best dialogue neighbour of the walk is kept"
    without = expand(graph, "ns", plan, TARGET, set(), hops=2, top_n=1)  # type: ignore[arg-type]
    assert "f" not in {r.memory.id for r in without}


def test_a_walk_table_relates_each_candidate_to_the_target_the_question_and_the_anchors() -> None:
    graph = Graph(EDGES, VECTORS)
    plan = Plan(anchors=["a"], target_places=["Harbor"])
    found = walk(graph, "ns", plan.anchors, {"d"}, hops=2)  # type: ignore[arg-type]
    assert list(found.memories) == ["b", "harbor", "c"], "walked, less what is excluded"
    question = np.asarray([0.0, 1.0], dtype=np.float32)
    rows = walk_table(graph, "ns", found, plan, TARGET, question, 2)  # type: ignore[arg-type]
    table = {
        mid: dict(zip(WALK_FEATURES, row, strict=True))
        for mid, row in zip(found.memories, rows, strict=True)
    }
    assert table["c"]["target_alignment"] == 1.0 and table["c"]["target_rank"] == 0.0
    assert round(table["b"]["target_below_best"], 6) == 0.4
    assert round(table["b"]["question_alignment"], 6) == 0.8
    assert table["harbor"]["cue_match"] == 1.0 and table["b"]["cue_match"] == 0.0
    assert (table["c"]["depth"], table["c"]["strength"]) == (2.0, 0.7)
    assert (table["harbor"]["via_semantic"], table["harbor"]["via_structural"]) == (1.0, 1.0)
    assert table["harbor"]["channels"] == 2.0 and table["c"]["via_semantic"] == 0.0
    assert table["b"]["anchor_session"] == 1.0, "every unit here shares the anchor's session"
    assert table["b"]["days_from_anchor"] == -1.0, "no dates: unknown"
    assert table["b"]["round"] == 2.0 and table["b"]["tokens"] > 0


def test_a_walk_model_chooses_what_is_kept_and_the_hand_score_stays_the_score() -> None:
    deeper = Shape("depth", np.array([1.5]), np.array([0.0, 1.0]))  # prefers two hops away
    flat = [Shape(f, np.array([]), np.array([0.0])) for f in WALK_FEATURES if f != "depth"]
    shapes = tuple(deeper if f == "depth" else flat.pop(0) for f in WALK_FEATURES)
    model = WalkModel(Ranker(WALK_FEATURES, shapes), TARGET, 1)
    graph = Graph(EDGES, VECTORS)
    by_hand = expand(graph, "ns", Plan(anchors=["a"]), TARGET, set(), hops=2, top_n=1)  # type: ignore[arg-type]
    learned = expand(graph, "ns", Plan(anchors=["a"]), TARGET, set(), hops=2, top_n=1, model=model)  # type: ignore[arg-type]
    assert [(r.memory.id, r.channel) for r in by_hand] == [("c", STRUCTURAL), ("harbor", SEMANTIC)]
    # One hop away the model ties, and a tie goes to the stronger edge: b (0.9), not harbor.
    assert [(r.memory.id, r.channel) for r in learned] == [("c", STRUCTURAL), ("b", SEMANTIC)]
    assert [round(r.score, 6) for r in learned] == [1.0, 0.6], "the hand score, not the model's"
    assert learned[0].reasons == {"depth": 1.0} and learned[1].reasons == {}, "a zero is no reason"
    assert by_hand[0].reasons == {}, "the hand rule gives no learned reasons"
