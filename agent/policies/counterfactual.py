"""Offline counterfactual refinement (ActMem D without a model): seek standing constraints.

"If the user does this, what could go wrong?" needs world knowledge a rule cannot have; what
rules can do is retrieve the user's standing constraints — health, diet, allergies, pets,
money, time, goals, recent changes — that concern the people in the question, ranked against
the action asked about.  Each becomes a risk statement, and the trace says that no world
knowledge was used.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence

import numpy as np

from agent.memory import MemoryKind, MemoryUnit
from agent.state import QueryCues
from agent.store import MemoryStore
from agent.text import normalise_cue

CONSTRAINT = re.compile(
    r"\b(?:allerg\w*|intoleran\w*|diet\w*|vegan|vegetarian|gluten|lactose|diabet\w*|asthma|"
    r"sick|ill|injur\w*|pain|doctor|hospital|medic\w*|pregnan\w*|avoid\w*|can't|cannot|"
    r"must not|never|afraid|phobia|pet|dog|cat|puppy|kitten|budget|money|afford|expensive|"
    r"broke|savings|debt|busy|deadline|schedule|time|goal|quit|sober|recover\w*|moved|"
    r"new job|lost)\b"
)  # searched in lower-cased text: four times faster than re.IGNORECASE on long turns


def _is_constraint(memory: MemoryUnit) -> bool:
    return memory.kind is MemoryKind.STATE or bool(CONSTRAINT.search(memory.text.lower()))


class Constraints:
    """A namespace's standing constraints in write order, indexed by the people they name.

    Their vectors are read once and kept as one matrix, so ranking them against a question
    is one product rather than a Python loop over every constraint (tens of thousands in a
    100k-unit namespace).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.units: list[MemoryUnit] = []
        self._people: dict[str, list[int]] = {}
        self._matrix = np.zeros((0, 0), dtype=np.float32)  # capacity doubles as it fills
        self._stored = np.zeros(0, dtype=bool)
        self._state = np.zeros(0, dtype=bool)
        self._read_rows = 0  # constraints whose vectors have been read

    @classmethod
    def of(cls, units: Sequence[MemoryUnit]) -> Constraints:
        """The constraints among the units."""
        return cls().extended(units)

    def extended(self, units: Sequence[MemoryUnit]) -> Constraints:
        """The constraints among the units appended, in place; returns the index."""
        with self._lock:
            for unit in filter(_is_constraint, units):
                for person in {normalise_cue(p) for p in unit.people}:
                    self._people.setdefault(person, []).append(len(self.units))
                self.units.append(unit)
        return self

    def ranked(
        self,
        people: set[str],
        query_vector: np.ndarray,
        read: Callable[[list[str]], dict[str, np.ndarray]],
        k: int,
    ) -> list[tuple[MemoryUnit, float]]:
        """Top ``k`` constraints naming any of ``people`` (any when empty), by cosine.

        A state memory gains 0.2 and ties go to the smaller id.  ``read`` fetches stored
        vectors by id; a constraint without one is never ranked.
        """
        with self._lock:
            if self._read_rows < len(self.units):
                self._read(read)
            count = self._read_rows
            if k <= 0 or not self._stored[:count].any():
                return []
            if people:
                rows = np.unique(
                    np.asarray([i for p in people for i in self._people.get(p, ())], dtype=np.int64)
                )
                near = self._matrix[rows] @ query_vector
            else:
                rows = np.arange(count)
                near = self._matrix[:count] @ query_vector  # a view: no copy of the matrix
            kept = self._stored[rows]
            rows = rows[kept]
            scores = near[kept].astype(np.float64) + 0.2 * self._state[rows]
            units = self.units
        if len(rows) > k:
            keep = scores >= np.partition(scores, len(rows) - k)[len(rows) - k]
            rows, scores = rows[keep], scores[keep]
        pairs = zip(rows.tolist(), scores.tolist(), strict=True)
        best = sorted(pairs, key=lambda r: (-r[1], units[r[0]].id))
        return [(units[row], score) for row, score in best[:k]]

    def _read(self, read: Callable[[list[str]], dict[str, np.ndarray]]) -> None:
        new = self.units[self._read_rows :]
        vectors = read([unit.id for unit in new])
        width = next((len(v) for v in vectors.values()), self._matrix.shape[1])
        needed = self._read_rows + len(new)
        if needed > len(self._matrix) or width != self._matrix.shape[1]:
            capacity = max(needed, 2 * len(self._matrix), 64)
            matrix = np.zeros((capacity, width), dtype=np.float32)
            stored = np.zeros(capacity, dtype=bool)
            state = np.zeros(capacity, dtype=bool)
            if width == self._matrix.shape[1]:
                matrix[: self._read_rows] = self._matrix[: self._read_rows]
                stored[: self._read_rows] = self._stored[: self._read_rows]
                state[: self._read_rows] = self._state[: self._read_rows]
            self._matrix, self._stored, self._state = matrix, stored, state
        for index, unit in enumerate(new, start=self._read_rows):
            self._state[index] = unit.kind is MemoryKind.STATE
            if unit.id in vectors:
                self._matrix[index], self._stored[index] = vectors[unit.id], True
        self._read_rows = needed


def standing_constraints(store: MemoryStore, namespace: str) -> Constraints:
    """State memories and memories that state a constraint, in write order.

    Followed per namespace: a write tests only its new units.
    """
    return store.follow("standing constraints", namespace, Constraints.of, Constraints.extended)


def seek_constraints(
    store: MemoryStore,
    namespace: str,
    cues: QueryCues,
    query_vector: np.ndarray,
    k: int,
) -> list[tuple[MemoryUnit, float, str]]:
    """Top ``k`` constraints linked to the query's people, with a risk statement each."""
    named = {normalise_cue(p) for p in cues.people}
    found = standing_constraints(store, namespace).ranked(
        named, query_vector, lambda ids: store.embeddings(namespace, ids), k
    )
    return [
        (m, round(score, 4), f"If the user goes ahead, this standing fact may conflict: {m.text}")
        for m, score in found
    ]
