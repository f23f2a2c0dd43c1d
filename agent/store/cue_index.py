"""The cue channel's index: which units name each person and place, and when each happened.

Kept in process per namespace and grown with its writes (``DerivedCache.follow``), so a query
counts shared cues over postings with numpy instead of a SQL ``GROUP BY`` over every matching
cue row joined to its unit: a main speaker's name matches tens of thousands of units in a
100k-unit namespace.
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from ripplegraph.agent.memory import MemoryUnit, TimeInterval
from ripplegraph.agent.memory.text import normalise_cue
from ripplegraph.agent.store.lexical import find_position

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


def _keys(unit: MemoryUnit) -> set[tuple[str, str]]:
    """The unit's postings keys: each person and place it names, once."""
    keys = {("person", normalise_cue(p)) for p in unit.people}
    keys |= {("place", normalise_cue(p)) for p in unit.places}
    return {key for key in keys if key[1]}


class CueIndex:
    """Person and place postings, and time intervals, of a namespace's units in write order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids: list[str] = []
        self._position: dict[str, int] = {}
        # Typed buffers that grow in place and that numpy reads without a copy (under the
        # lock, so no view outlives a read while a write appends).
        self._starts = array("d")
        self._ends = array("d")
        self._postings: dict[tuple[str, str], array[int]] = {}

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
                for key in _keys(unit):
                    self._postings.setdefault(key, array("q")).append(index)
        return self

    def without(self, units: Sequence[MemoryUnit]) -> CueIndex | None:
        """The units taken out, in place; None when the index should be rebuilt instead.

        A removed unit's slot stays, out of every posting and without a time, so no query
        finds it; when more slots are empty than full the index declines and is rebuilt.
        """
        with self._lock:
            for unit in units:
                index = self._position.pop(unit.id, None)
                if index is None:  # written after the index last grew
                    continue
                for key in _keys(unit):
                    postings = self._postings.get(key)
                    at = -1 if postings is None else find_position(postings, index)
                    if postings is None or at < 0:
                        return None
                    del postings[at]
                    if not postings:
                        del self._postings[key]
                self._ids[index] = ""
                self._starts[index] = self._ends[index] = np.nan
            return self if 2 * len(self._position) >= len(self._ids) else None

    def matches(
        self,
        people: Iterable[str],
        places: Iterable[str],
        interval: TimeInterval | None,
        *,
        k: int,
        window_days: float = 7.0,
        exclude: str | None = None,
        closeness: Callable[[list[str]], np.ndarray] | None = None,
        candidates: int = 0,
    ) -> list[CueMatch]:
        """Units sharing the most person/place cues, or near in time; nearest first on ties.

        A unit whose interval overlaps the query's, widened by ``window_days``, shares one
        more cue.  Ties go to the unit nearest in time (midpoints), then the earlier write.
        With ``closeness`` (one score per unit id, higher nearer), the first ``candidates``
        matches in that order are re-ranked: ties then go to the closest unit, then the
        smaller id.  Match objects are built for the ``k`` returned only, since a main
        speaker's name matches most of a namespace.
        """
        keys = [("person", normalise_cue(p)) for p in people]
        keys += [("place", normalise_cue(p)) for p in places]
        with self._lock:
            counted = self._count(keys, interval, window_days, exclude) if k > 0 else None
            ids = self._ids
        if counted is None:
            return []
        found_at, shared, distance = counted
        fewer = -shared[found_at]  # fewer shared cues sort later
        order = np.lexsort((found_at, distance, fewer))
        if closeness is None or len(order) <= 1:
            order = order[:k]
        else:
            order = order[: max(k, candidates)]
            # The order is by shared cues first, so a unit sharing fewer than the k-th cannot
            # reach the top k whatever its closeness: only the rest are compared.
            order = order[fewer[order] <= fewer[order[min(k, len(order)) - 1]]]
            chosen = [ids[found_at[i]] for i in order]
            closest = np.asarray(closeness(chosen), dtype=np.float64)
            order = order[np.lexsort((np.array(chosen), np.negative(closest), fewer[order]))][:k]
        return [
            CueMatch(ids[found_at[i]], int(shared[found_at[i]]), float(distance[i]) / 86400.0)
            for i in order
        ]

    def _count(
        self,
        keys: list[tuple[str, str]],
        interval: TimeInterval | None,
        window_days: float,
        exclude: str | None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(positions, shared cues by position, time distance) of the matches, or None.

        Called under the lock: its views of the buffers die with its frame, before a write
        may grow them.
        """
        starts = np.frombuffer(self._starts, dtype=np.float64)
        ends = np.frombuffer(self._ends, dtype=np.float64)
        found = [
            np.frombuffer(self._postings[key], dtype=np.int64)
            for key in sorted(set(keys))
            if key[1] and key in self._postings
        ]
        if interval is not None:
            start, end = epoch(interval.start), epoch(interval.end)
            window = window_days * 86400.0
            with np.errstate(invalid="ignore"):
                near = (starts < end + window) & (ends > start - window)
            found.append(np.flatnonzero(near))
        if not found:
            return None
        shared = np.bincount(np.concatenate(found), minlength=len(starts))
        found_at = np.flatnonzero(shared)
        excluded = self._position.get(exclude, -1) if exclude is not None else -1
        found_at = found_at[found_at != excluded]
        if not len(found_at):
            return None
        if interval is None:
            return found_at, shared, np.zeros(len(found_at))
        middle = (starts[found_at] + ends[found_at]) / 2
        centre = (start + end) / 2
        return found_at, shared, np.where(np.isnan(middle), _NO_TIME, np.abs(middle - centre))
