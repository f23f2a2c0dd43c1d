"""Caches of values derived from a namespace's memories (roots, constraints, searches).

An entry is valid for one write generation of its namespace: any write or forget bumps the
generation, so the next read rebuilds it.  Forgetting also evicts the entries at once, so no
forgotten text lingers in process memory.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, Generic, TypeVar

T = TypeVar("T")
_registry: list[DerivedCache[Any]] = []


class DerivedCache(Generic[T]):
    """One value per (store, namespace, parameters), rebuilt after the namespace changes.

    With a ``limit``, the least recently used entries go first: caches keyed by free text
    (a query) would otherwise grow with every question asked.
    """

    def __init__(self, limit: int | None = None) -> None:
        self._entries: OrderedDict[tuple[Hashable, ...], tuple[int, T]] = OrderedDict()
        self._limit = limit
        self._lock = threading.Lock()
        _registry.append(self)

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

    def evict(self, directory: Path, namespace: str) -> None:
        """Drop every entry of the namespace."""
        with self._lock:
            for key in [k for k in self._entries if k[:2] == (str(directory), namespace)]:
                del self._entries[key]

    def clear(self, directory: Path) -> None:
        """Drop every entry of the store."""
        with self._lock:
            for key in [k for k in self._entries if k[0] == str(directory)]:
                del self._entries[key]


def evict_namespace(directory: Path, namespace: str) -> None:
    """Drop every derived value of a namespace, in every cache."""
    for cache in _registry:
        cache.evict(directory, namespace)
