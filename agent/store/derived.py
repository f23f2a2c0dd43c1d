"""Caches of values derived from a namespace's memories (root units, standing constraints).

An entry is valid for one write generation of its namespace: any write or forget bumps the
generation, so the next read rebuilds it.  Forgetting also evicts the entries at once, so no
forgotten text lingers in process memory.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, Generic, TypeVar

T = TypeVar("T")
_registry: list[DerivedCache[Any]] = []


class DerivedCache(Generic[T]):
    """One value per (store, namespace, parameters), rebuilt after the namespace changes."""

    def __init__(self) -> None:
        self._entries: dict[tuple[Hashable, ...], tuple[int, T]] = {}
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
            return hit[1]
        value = build()
        with self._lock:
            self._entries[key] = (generation, value)
        return value

    def evict(self, directory: Path, namespace: str) -> None:
        """Drop every entry of the namespace."""
        with self._lock:
            for key in [k for k in self._entries if k[:2] == (str(directory), namespace)]:
                del self._entries[key]


def evict_namespace(directory: Path, namespace: str) -> None:
    """Drop every derived value of a namespace, in every cache."""
    for cache in _registry:
        cache.evict(directory, namespace)
