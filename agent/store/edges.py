"""The memory graph's edges: their types, the reverse of each directed type, the edge itself."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, NamedTuple

EdgeType = Literal["semantic", "structural", "causal", "caused_by", "dialogue"]

SEMANTIC: EdgeType = "semantic"
STRUCTURAL: EdgeType = "structural"
CAUSAL: EdgeType = "causal"  # cause → effect
CAUSED_BY: EdgeType = "caused_by"  # effect → cause
DIALOGUE: EdgeType = "dialogue"
"""The memory written just before or just after in the same session: not stored but followed
from the write order (``store.dialogue``), so it needs no linking and a forget leaves none."""

LINK_TYPES: tuple[EdgeType, ...] = (SEMANTIC, STRUCTURAL)
"""Undirected types linking builds at ingest; each is stored in both directions."""

CAUSAL_TYPES: tuple[EdgeType, ...] = (CAUSAL, CAUSED_BY)
"""Directed types the causal role adds; each direction is stored under its own type."""

REVERSE_TYPE: dict[EdgeType, EdgeType] = {CAUSAL: CAUSED_BY, CAUSED_BY: CAUSAL}
"""The type an edge is stored under in the other direction (an undirected type: itself)."""


Pairs = Iterable[tuple[str, str]]
"""Edges to drop, as (a, b)."""

WeightedPairs = Iterable[tuple[str, str, float]]
"""Edges to add, as (a, b, weight)."""


def reverse(edge_type: EdgeType) -> EdgeType:
    """The type of the same edge read from its other end."""
    return REVERSE_TYPE.get(edge_type, edge_type)


class Edge(NamedTuple):
    """A typed, weighted edge, stored in both directions (``reverse`` gives the other's type).

    A named tuple, not a frozen dataclass: expansion and the bench's template checks build
    thousands per call, and a tuple builds and hashes at about a third of the cost.
    """

    src: str
    dst: str
    type: str
    weight: float
