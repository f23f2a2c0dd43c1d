"""A namespace's vocabulary: people, places, terms and sessions with their counts, latest time.

Derived from the units and followed as they change (grown by a write, shrunk by a forget),
so the cue channel, the planner and the sufficiency check read it without scanning the
namespace.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime

from ripplegraph.agent.memory import MemoryUnit
from ripplegraph.agent.memory.text import normalise_cue


class Vocabulary:
    """A namespace's people, places and terms with their unit counts, sessions, latest time.

    Edited in place under a lock (a write adds its units, a forget takes them away), so a
    forget costs what it removed; the end times are counted too, so forgetting the newest
    memory finds the latest among those left without reading the namespace.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, Counter[str]] = {
            "person": Counter(),
            "place": Counter(),
            "term": Counter(),
            "session": Counter(),
        }
        self._ends: Counter[datetime] = Counter()
        self._latest: datetime | None = None

    @classmethod
    def of(cls, units: Sequence[MemoryUnit]) -> Vocabulary:
        """The vocabulary of the units."""
        return cls().extended(units)

    def extended(self, units: Sequence[MemoryUnit]) -> Vocabulary:
        """The units' cues added, in place; returns the vocabulary."""
        with self._lock:
            for unit in units:
                for kind, values in _cues(unit):
                    self._counts[kind].update(values)
                if unit.time is not None:
                    self._ends[unit.time.end] += 1
                    if self._latest is None or unit.time.end > self._latest:
                        self._latest = unit.time.end
        return self

    def without(self, units: Sequence[MemoryUnit]) -> Vocabulary:
        """The units' cues taken away, in place; returns the vocabulary."""
        with self._lock:
            for unit in units:
                for kind, values in _cues(unit):
                    self._counts[kind].subtract(values)
                    for value in values:
                        if self._counts[kind][value] <= 0:
                            del self._counts[kind][value]
                if unit.time is not None:
                    self._ends[unit.time.end] -= 1
                    if self._ends[unit.time.end] <= 0:
                        del self._ends[unit.time.end]
            if self._latest is not None and self._latest not in self._ends:
                self._latest = max(self._ends, default=None)
        return self

    def held(self, terms: Iterable[str]) -> list[str]:
        """The terms (``MemoryUnit.terms``' form) that at least one memory holds, in order."""
        with self._lock:
            return [term for term in terms if term in self._counts["term"]]

    @property
    def sessions(self) -> int:
        """How many sessions the namespace's memories come from."""
        with self._lock:
            return len(self._counts["session"])

    @property
    def latest(self) -> datetime | None:
        """The end of the latest memory's time, if any memory has one."""
        with self._lock:
            return self._latest

    def ranked(self) -> tuple[list[str], list[str]]:
        """People, then places: most frequent first, ties by name."""
        with self._lock:
            people, places = (
                [v for v, _ in sorted(self._counts[kind].items(), key=lambda i: (-i[1], i[0]))]
                for kind in ("person", "place")
            )
        return people, places


def _cues(unit: MemoryUnit) -> list[tuple[str, set[str]]]:
    """The unit's people, places, terms and session, each once, as the vocabulary counts them."""
    return [
        *(
            (kind, {v for v in map(normalise_cue, values) if v})
            for kind, values in (("person", unit.people), ("place", unit.places))
        ),
        ("term", set(unit.terms_unkept())),
        ("session", {unit.provenance.session_id}),
    ]
