"""Offline counterfactual refinement (ActMem D without a model): seek standing constraints.

"If the user does this, what could go wrong?" needs world knowledge a rule cannot have; what
rules can do is bring the person's own standing facts — what they disclosed about their
state, changes of status, commitments and preferences (``agent.policies.standing``), minus
those a newer change superseded — that concern the people in the question, ranked against the action
asked about.  Each becomes a risk statement, and the trace says that no world knowledge was
used.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ripplegraph.agent.decisions.policies.standing import (
    NEAR,
    Standing,
    overridden,
    same_attribute,
    standing_fact,
)
from ripplegraph.agent.memory import MemoryUnit
from ripplegraph.agent.memory.text import normalise_cue
from ripplegraph.agent.state import QueryCues
from ripplegraph.agent.store import MemoryStore


class Constraints:
    """A namespace's standing facts in write order, indexed by the people they name.

    Their vectors are read once and kept as one matrix, so ranking them against a question
    is one product rather than a Python loop over every constraint (tens of thousands in a
    100k-unit namespace).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.units: list[MemoryUnit] = []
        self.facts: list[Standing] = []
        self._rows: dict[str, int] = {}
        self.superseded: dict[str, str] = {}  # older id -> id of the change that overrides it
        self._people: dict[str, list[int]] = {}
        self._matrix = np.zeros((0, 0), dtype=np.float32)  # capacity doubles as it fills
        self._stored = np.zeros(0, dtype=bool)
        self._active = np.zeros(0, dtype=bool)
        self._read_rows = 0  # constraints whose vectors have been read

    @classmethod
    def of(cls, units: Sequence[MemoryUnit]) -> Constraints:
        """The constraints among the units."""
        return cls().extended(units)

    def extended(self, units: Sequence[MemoryUnit]) -> Constraints:
        """The constraints among the units appended, in place; returns the index."""
        with self._lock:
            for unit in units:
                fact = standing_fact(unit)
                if fact is None:
                    continue
                for person in {normalise_cue(p) for p in unit.people}:
                    self._people.setdefault(person, []).append(len(self.units))
                self._rows[unit.id] = len(self.units)
                self.units.append(unit)
                self.facts.append(fact)
        return self

    def without(self, units: Sequence[MemoryUnit]) -> Constraints:
        """The facts among ``units`` removed, in place; returns the index.

        The kept facts keep their vectors and their people's postings (renumbered), so
        nothing is read or parsed again.  A fact that a removed change superseded stands
        again unless a later kept change also supersedes it, which is tested for that fact
        alone.  Nothing is done unless a removed unit is a fact.
        """
        gone = {u.id for u in units}
        with self._lock:
            removed = [self._rows[mid] for mid in gone & self._rows.keys()]
            if not removed:
                return self
            freed = {old for old, by in self.superseded.items() if by in gone} - gone
            keep = np.ones(len(self.units), dtype=bool)
            keep[removed] = False
            read = np.flatnonzero(keep[: self._read_rows])
            count = len(read)
            self._matrix[:count] = self._matrix[read]
            self._stored[:count] = self._stored[read]
            self._active[:count] = self._active[read]
            self._matrix[count : self._read_rows] = 0  # no forgotten vector stays behind
            self._stored[count:] = self._active[count:] = False
            self._read_rows = count
            kept, renumbered = keep.tolist(), (np.cumsum(keep) - 1).tolist()
            self.units = [u for u, k in zip(self.units, kept, strict=True) if k]
            self.facts = [f for f, k in zip(self.facts, kept, strict=True) if k]
            self._rows = {unit.id: row for row, unit in enumerate(self.units)}
            postings = {
                person: [renumbered[row] for row in rows if kept[row]]
                for person, rows in self._people.items()
            }
            self._people = {person: rows for person, rows in postings.items() if rows}
            self.superseded = {
                old: by for old, by in self.superseded.items() if old not in gone and by not in gone
            }
            for old in freed:
                self._reconsider(self._rows[old])
        return self

    def _reconsider(self, row: int) -> None:
        """Whether the read fact at ``row`` stands, given the changes written after it."""
        self._active[row] = self._stored[row]
        near = self._matrix[row + 1 : self._read_rows] @ self._matrix[row]
        older = (self.units[row], self.facts[row])
        for offset in reversed(np.flatnonzero(near >= NEAR).tolist()):  # the last change wins
            later = row + 1 + offset
            newer = (self.units[later], self.facts[later])
            if (
                self._stored[later]
                and newer[1].kind == "change"
                and same_attribute(newer, older, float(near[offset]))
            ):
                self._active[row] = False
                self.superseded[self.units[row].id] = self.units[later].id
                return

    def superseding(self, read: Callable[[list[str]], dict[str, np.ndarray]]) -> dict[str, str]:
        """Every superseded fact's id with the id of the change that overrides it."""
        with self._lock:
            self._read(read)
            return dict(self.superseded)

    def standing(self, ids: Sequence[str]) -> set[str]:
        """Those of ``ids`` that are active standing facts (read facts only)."""
        with self._lock:
            rows = [(mid, self._rows.get(mid)) for mid in ids]
            return {
                mid
                for mid, row in rows
                if row is not None and row < self._read_rows and self._active[row]
            }

    def reason(self, memory_id: str) -> str:
        """Why the fact with this id stands (its kind and sentence)."""
        with self._lock:
            return self.facts[self._rows[memory_id]].reason

    def ranked(
        self,
        people: set[str],
        query_vector: np.ndarray,
        read: Callable[[list[str]], dict[str, np.ndarray]],
        k: int,
    ) -> list[tuple[MemoryUnit, float]]:
        """Top ``k`` active facts naming any of ``people`` (any when empty), by cosine.

        Ties go to the smaller id.  ``read`` fetches stored vectors by id; a fact without
        one is never ranked, nor is a superseded one.
        """
        with self._lock:
            self._read(read)
            count = self._read_rows
            if k <= 0 or not self._active[:count].any():
                return []
            if people:
                rows = np.unique(
                    np.asarray([i for p in people for i in self._people.get(p, ())], dtype=np.int64)
                )
                near = self._matrix[rows] @ query_vector
            else:
                rows = np.arange(count)
                near = self._matrix[:count] @ query_vector  # a view: no copy of the matrix
            kept = self._active[rows]
            rows = rows[kept]
            scores = near[kept].astype(np.float64)
            units = self.units
        if len(rows) > k:
            keep = scores >= np.partition(scores, len(rows) - k)[len(rows) - k]
            rows, scores = rows[keep], scores[keep]
        pairs = zip(rows.tolist(), scores.tolist(), strict=True)
        best = sorted(pairs, key=lambda r: (-r[1], units[r[0]].id))
        return [(units[row], score) for row, score in best[:k]]

    def _read(self, read: Callable[[list[str]], dict[str, np.ndarray]]) -> None:
        """Read the vectors of the facts added since the last read (none: nothing to do)."""
        new = self.units[self._read_rows :]
        if not new:
            return
        vectors = read([unit.id for unit in new])
        width = next((len(v) for v in vectors.values()), self._matrix.shape[1])
        needed = self._read_rows + len(new)
        if needed > len(self._matrix) or width != self._matrix.shape[1]:
            capacity = max(needed, 2 * len(self._matrix), 64)
            matrix = np.zeros((capacity, width), dtype=np.float32)
            stored = np.zeros(capacity, dtype=bool)
            active = np.zeros(capacity, dtype=bool)
            if width == self._matrix.shape[1]:
                matrix[: self._read_rows] = self._matrix[: self._read_rows]
                stored[: self._read_rows] = self._stored[: self._read_rows]
                active[: self._read_rows] = self._active[: self._read_rows]
            self._matrix, self._stored, self._active = matrix, stored, active
        facts = list(zip(self.units, self.facts, strict=True))
        for index, unit in enumerate(new, start=self._read_rows):
            if unit.id in vectors:
                self._matrix[index], self._stored[index] = vectors[unit.id], True
                self._active[index] = True
                for row in overridden(index, facts, self._matrix):
                    self._active[row] = False
                    self.superseded[self.units[row].id] = unit.id
        self._read_rows = needed


def standing_constraints(store: MemoryStore, namespace: str) -> Constraints:
    """The namespace's standing facts, in write order.

    Followed per namespace: a write tests only its new units.
    """
    return store.follow(
        "standing constraints", namespace, Constraints.of, Constraints.extended, Constraints.without
    )


@dataclass(frozen=True)
class Found:
    """A standing fact the step brings, with its score, its risk statement and why it stands."""

    memory: MemoryUnit
    score: float
    statement: str
    reason: str


@dataclass(frozen=True)
class Sought:
    """What the constraint search found, what it lifts, and what it set aside."""

    found: list[Found]
    lifted: list[str]  # ids of the found facts the evidence needs lifted into view
    present: list[str]  # active standing facts already in the top window
    superseded: dict[str, str]  # older fact id -> id of the found change overriding it
    index: Constraints  # the namespace's standing facts, to test what else is one


def lifted(
    found: Sequence[Found], present: Sequence[str], window: Sequence[str], k: int, unrelated: int
) -> list[str]:
    """The found facts to lift: a decision's top window should hold ``k`` standing facts.

    Those similarity already placed in the window count; only the rest are lifted, best
    first, and no more than the window holds unrelated memories, which are all a lifted
    fact may push out.  In chat, where the top window is mostly talk unrelated to the
    question, up to ``k`` come in; over a profile whose every memory bears on the question,
    few or none.
    """
    room = max(0, min(k - len(present), unrelated))
    return [f.memory.id for f in found if f.memory.id not in window][:room]


def seek_constraints(
    store: MemoryStore,
    namespace: str,
    cues: QueryCues,
    query_vector: np.ndarray,
    k: int,
    window: Sequence[str] = (),
    unrelated: int = 0,
) -> Sought:
    """Top ``k`` active standing facts of the query's people, and which of them to lift.

    A question in the first person ("can I…", "for us") is the memory owner's own decision:
    every active fact of the namespace is a candidate, whoever else it names.  ``window``
    is the current top of the evidence, best first, holding ``unrelated`` memories
    unrelated to the question.
    """
    named = set() if cues.first_person else {normalise_cue(p) for p in cues.people}
    index = standing_constraints(store, namespace)
    ranked = index.ranked(named, query_vector, lambda ids: store.embeddings(namespace, ids), k)
    found = [
        Found(
            memory=m,
            score=round(score, 4),
            statement=f"If the user goes ahead, this standing fact may conflict: {m.text}",
            reason=index.reason(m.id),
        )
        for m, score in ranked
    ]
    ids = {f.memory.id for f in found}
    standing = index.standing(window)
    present = [mid for mid in window if mid in standing]
    return Sought(
        found=found,
        lifted=lifted(found, present, window, k, unrelated),
        present=present,
        superseded={old: new for old, new in index.superseded.items() if new in ids},
        index=index,
    )
