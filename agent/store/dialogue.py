"""A namespace's sessions in write order: which memory was written just before and after.

Derived from the units and followed as they change (grown by a write, shrunk by a forget),
so recall's walk steps along the dialogue without a query per step.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ripplegraph.agent.memory import MemoryUnit


@dataclass
class _Session:
    """One session's units in write order; ``ordinals`` ascend with ``ids`` for bisection."""

    ids: list[str] = field(default_factory=list)
    ordinals: list[int] = field(default_factory=list)


class Dialogue:
    """Each session's live units in write order, edited in place under a lock.

    A unit's place is found by bisection over ordinals that only grow, so a step costs the
    logarithm of its session's length and a forget what it removed.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sessions: dict[str, _Session] = {}
        self._place: dict[str, tuple[str, int]] = {}  # unit -> (session, ordinal)
        self._next = 0

    @classmethod
    def of(cls, units: Sequence[MemoryUnit]) -> Dialogue:
        """The dialogue of the units, given in write order."""
        return cls().extended(units)

    def extended(self, units: Sequence[MemoryUnit]) -> Dialogue:
        """Units written after every unit held, appended to their sessions; returns self."""
        with self._lock:
            for unit in units:
                if unit.id in self._place:
                    continue
                session = unit.provenance.session_id
                held = self._sessions.setdefault(session, _Session())
                held.ids.append(unit.id)
                held.ordinals.append(self._next)
                self._place[unit.id] = (session, self._next)
                self._next += 1
        return self

    def without(self, units: Sequence[MemoryUnit]) -> Dialogue:
        """The units taken out of their sessions, in place; returns self."""
        with self._lock:
            for unit in units:
                place = self._place.pop(unit.id, None)
                if place is None:
                    continue
                session, ordinal = place
                held = self._sessions[session]
                at = bisect_left(held.ordinals, ordinal)
                del held.ids[at], held.ordinals[at]
                if not held.ids:
                    del self._sessions[session]
        return self

    def beside(self, ids: Iterable[str]) -> list[tuple[str, str]]:
        """(unit, neighbour) pairs: for each known unit, the one before, then the one after."""
        pairs: list[tuple[str, str]] = []
        with self._lock:
            for mid in ids:
                place = self._place.get(mid)
                if place is None:
                    continue
                held = self._sessions[place[0]]
                at = bisect_left(held.ordinals, place[1])
                if at > 0:
                    pairs.append((mid, held.ids[at - 1]))
                if at + 1 < len(held.ids):
                    pairs.append((mid, held.ids[at + 1]))
        return pairs
