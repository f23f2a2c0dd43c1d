"""Caches of values derived from a namespace's memories (roots, constraints, searches).

An entry is valid for one write generation of its namespace: any write or forget bumps the
generation.  A value derived from the units alone (the BM25 index, the cue index, the
vocabulary, standing memories) then *grows* by the units written since
(``DerivedCache.follow``), so the chat loop's write costs the next recall what it added, not
a rebuild of the whole namespace.  A forget in this process *shrinks* the followed values
that know how (``DerivedCache.forgotten``), so it too costs what it removed; a deletion by
anyone else, or a value that cannot shrink, rebuilds.  Other values are rebuilt.  Forgetting
evicts or shrinks at once, so no forgotten text lingers in process memory.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from ripplegraph.agent.memory import MemoryUnit

T = TypeVar("T")
_registry: weakref.WeakSet[DerivedCache[Any]] = weakref.WeakSet()  # every live cache


@dataclass(frozen=True)
class Changes:
    """What a namespace holds beyond a write sequence number."""

    units: list[tuple[int, MemoryUnit]]  # (write sequence, unit), in write order
    removals: int  # deletions the namespace has seen, ever


Shrink = Callable[[T, "Sequence[MemoryUnit]"], "T | None"]
"""A followed value without the given units, or None when it must be rebuilt instead."""


@dataclass
class _Followed(Generic[T]):
    generation: int
    value: T
    seq: int
    removals: int
    weight: int
    shrink: Shrink[T] | None


class DerivedCache(Generic[T]):
    """One value per (store, namespace, parameters), rebuilt after the namespace changes.

    With a ``limit``, the least recently used entries go first, and the least recently used
    namespaces' followed values: caches keyed by free text (a query) would otherwise grow with
    every question asked, and followed values with every user who ever asked one.  With a
    ``weigh``, followed values also go, least recently used first, while their weights sum to
    more than ``capacity`` (a namespace's vectors weigh what they hold).
    """

    def __init__(
        self,
        limit: int | None = None,
        weigh: Callable[[T], int] | None = None,
        capacity: int | None = None,
    ) -> None:
        self._entries: OrderedDict[tuple[Hashable, ...], tuple[int, T]] = OrderedDict()
        self._limit = limit
        self._weigh = weigh
        self._capacity = capacity
        self._weight = 0  # of the followed values
        self._lock = threading.Lock()
        self._followed: OrderedDict[tuple[Hashable, ...], _Followed[T]] = OrderedDict()
        _registry.add(self)

    def get(
        self,
        directory: Path,
        namespace: str,
        generation: int,
        parameters: tuple[Hashable, ...],
        build: Callable[[], T],
    ) -> T:
        """The cached value for this generation, else ``build()`` (which replaces the old one)."""
        key = (str(directory), namespace, *parameters)
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None and hit[0] == generation:
                self._entries.move_to_end(key)
                return hit[1]
        value = build()
        with self._lock:
            self._entries[key] = (generation, value)
            self._entries.move_to_end(key)
            while self._limit is not None and len(self._entries) > self._limit:
                self._entries.popitem(last=False)
        return value

    def follow(
        self,
        directory: Path,
        namespace: str,
        generation: int,
        changes: Callable[[int], Changes],
        build: Callable[[list[MemoryUnit]], T],
        grow: Callable[[T, list[MemoryUnit]], T],
        shrink: Shrink[T] | None = None,
    ) -> T:
        """A value of the namespace's units, grown by the units written since it was made.

        ``changes(seq)`` reports the units after write sequence ``seq`` and the namespace's
        deletion count; while that count is the one last seen, ``grow`` adds the new units
        (in write order); after a deletion ``build`` starts again from every unit, unless
        ``shrink`` already removed what it deleted (``forgotten``).
        """
        key = (str(directory), namespace)
        with self._lock:
            hit = self._followed.get(key)
            if hit is not None:
                self._followed.move_to_end(key)
            if hit is not None and hit.generation == generation:
                return hit.value
            fresh = changes(hit.seq if hit else 0)
            new = [unit for _, unit in fresh.units]
            if hit is not None and fresh.removals == hit.removals:
                value, seq = (grow(hit.value, new) if new else hit.value), hit.seq
            else:
                if hit is not None:
                    fresh = changes(0)
                    new = [unit for _, unit in fresh.units]
                value, seq = build(new), 0
            if fresh.units:
                seq = fresh.units[-1][0]
            weight = self._weigh(value) if self._weigh is not None else 0
            if hit is not None:
                self._weight -= hit.weight
            self._followed[key] = _Followed(generation, value, seq, fresh.removals, weight, shrink)
            self._weight += weight
            while len(self._followed) > 1 and (
                (self._limit is not None and len(self._followed) > self._limit)
                or (self._capacity is not None and self._weight > self._capacity)
            ):
                self._weight -= self._followed.popitem(last=False)[1].weight
            return value

    def evict(self, directory: Path, namespace: str) -> None:
        """Drop every entry of the namespace."""
        with self._lock:
            for key in [k for k in self._entries if k[:2] == (str(directory), namespace)]:
                del self._entries[key]
            gone = self._followed.pop((str(directory), namespace), None)
            if gone is not None:
                self._weight -= gone.weight

    def forgotten(
        self,
        directory: Path,
        namespace: str,
        units: Sequence[MemoryUnit],
        removals: int,
        last_seq: int,
    ) -> None:
        """Drop the namespace's entries, shrinking its followed value by ``units`` if it can.

        Called after one deletion of ``units`` that left the namespace at ``removals``
        deletions and highest write sequence ``last_seq``.  The value shrinks only if it had
        seen every deletion before this one; otherwise, or when its ``shrink`` declines, it
        goes and is rebuilt on the next read.  Its sequence mark falls to ``last_seq`` when
        the forgotten units held the highest numbers, which a later write may reuse.
        """
        key = (str(directory), namespace)
        with self._lock:
            for entry in [k for k in self._entries if k[:2] == key]:
                del self._entries[entry]
            hit = self._followed.get(key)
            if hit is None:
                return
            value = (
                hit.shrink(hit.value, units)
                if hit.shrink is not None and hit.removals == removals - 1
                else None
            )
            self._weight -= hit.weight
            if value is None:
                del self._followed[key]
                return
            hit.value, hit.removals, hit.seq = value, removals, min(hit.seq, last_seq)
            hit.weight = self._weigh(value) if self._weigh is not None else 0
            self._weight += hit.weight

    def clear(self, directory: Path) -> None:
        """Drop every entry of the store."""
        with self._lock:
            for key in [k for k in self._entries if k[0] == str(directory)]:
                del self._entries[key]
            for key in [k for k in self._followed if k[0] == str(directory)]:
                self._weight -= self._followed.pop(key).weight


def forgotten_in_namespace(
    directory: Path, namespace: str, units: Sequence[MemoryUnit], removals: int, last_seq: int
) -> None:
    """After one deletion of ``units``: every cache's ``forgotten`` for the namespace."""
    for cache in _registry:
        cache.forgotten(directory, namespace, units, removals, last_seq)


def evict_namespace(directory: Path, namespace: str) -> None:
    """Drop every derived value of a namespace, in every cache."""
    for cache in _registry:
        cache.evict(directory, namespace)
