"""The cue channel's index: which units name each person and place, and when each happened.

Kept in process per namespace and grown with its writes (``DerivedCache.follow``), so a query
counts shared cues over postings with numpy instead of a SQL ``GROUP BY`` over every matching
cue row joined to its unit: a main speaker's name matches tens of thousands of units in a
100k-unit namespace.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from agent.memory import MemoryUnit, TimeInterval
from agent.text import normalise_cue

_NO_TIME = 1e18  # the distance of a unit without a time, as the SQL index gave it


@dataclass(frozen=True)
class CueMatch:
    """A unit found through the cue index, with how many query cues it shares."""

    unit_id: str
    shared: int
    time_distance_days: float


def epoch(moment: datetime) -> float:
    """Seconds since the epoch of a naive UTC datetime."""
    return moment.replace(tzinfo=UTC).timestamp()


class CueIndex:
    """Person and place postings, and time intervals, of a namespace's units in write order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids: list[str] = []
        self._position: dict[str, int] = {}
        self._starts: list[float] = []
        self._ends: list[float] = []
        self._postings: dict[tuple[str, str], list[int]] = {}
        self._arrays: tuple[np.ndarray, np.ndarray] | None = None

    @classmethod
    def of(cls, units: Sequence[MemoryUnit]) -> CueIndex:
        """The index of the units."""
        return cls().extended(units)

    def extended(self, units: Sequence[MemoryUnit]) -> CueIndex:
        """The units appended to this index, in place; returns the index."""
        with self._lock:
            for unit in units:
                index = len(self._ids)
                self._ids.append(unit.id)
                self._position[unit.id] = index
                self._starts.append(epoch(unit.time.start) if unit.time else np.nan)
                self._ends.append(epoch(unit.time.end) if unit.time else np.nan)
                keys = {("person", normalise_cue(p)) for p in unit.people}
                keys |= {("place", normalise_cue(p)) for p in unit.places}
                for key in keys:
                    if key[1]:
                        self._postings.setdefault(key, []).append(index)
            self._arrays = None
        return self

    def matches(
        self,
        people: Iterable[str],
        places: Iterable[str],
        interval: TimeInterval | None,
        *,
        k: int,
        window_days: float = 7.0,
        exclude: str | None = None,
    ) -> list[CueMatch]:
        """Units sharing the most person/place cues, or near in time; nearest first on ties.

        A unit whose interval overlaps the query's, widened by ``window_days``, shares one
        more cue.  Ties go to the unit nearest in time (midpoints), then the earlier write.
        """
        keys = [("person", normalise_cue(p)) for p in people]
        keys += [("place", normalise_cue(p)) for p in places]
        with self._lock:
            if self._arrays is None:
                self._arrays = (np.asarray(self._starts), np.asarray(self._ends))
            starts, ends = self._arrays
            found = [
                np.asarray(self._postings[key], dtype=np.int64)
                for key in sorted(set(keys))
                if key[1] and key in self._postings
            ]
            ids = self._ids
            excluded = self._position.get(exclude, -1) if exclude is not None else -1
        if interval is not None:
            start, end = epoch(interval.start), epoch(interval.end)
            window = window_days * 86400.0
            with np.errstate(invalid="ignore"):
                near = (starts < end + window) & (ends > start - window)
            found.append(np.flatnonzero(near))
        if not found or k <= 0:
            return []
        shared = np.bincount(np.concatenate(found), minlength=len(starts))
        candidates = np.flatnonzero(shared)
        candidates = candidates[candidates != excluded]
        if not len(candidates):
            return []
        if interval is not None:
            middle = (starts[candidates] + ends[candidates]) / 2
            distance = np.where(np.isnan(middle), _NO_TIME, np.abs(middle - (start + end) / 2))
        else:
            distance = np.zeros(len(candidates))
        order = np.lexsort((candidates, distance, -shared[candidates]))[:k]
        return [
            CueMatch(ids[candidates[i]], int(shared[candidates[i]]), float(distance[i]) / 86400.0)
            for i in order
        ]
