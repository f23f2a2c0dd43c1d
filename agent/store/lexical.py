"""The lexical channel: Okapi BM25 over each namespace's memory texts.

An index is rebuilt lazily, the first time a namespace is searched after a write (the store's
per-namespace generation counter says when), never per query.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np
from rank_bm25 import BM25Okapi

from agent.memory import MemoryUnit
from agent.text import tokenize


class LexicalIndex:
    """Per-namespace BM25 indexes, cached by the namespace's write generation."""

    def __init__(
        self,
        corpus: Callable[[str], list[MemoryUnit]],
        generation: Callable[[str], int],
    ) -> None:
        self._corpus = corpus
        self._generation = generation
        self._cache: dict[str, tuple[int, list[str], BM25Okapi | None]] = {}
        self._lock = threading.Lock()

    def _index(self, namespace: str) -> tuple[list[str], BM25Okapi | None]:
        generation = self._generation(namespace)
        with self._lock:
            cached = self._cache.get(namespace)
            if cached is not None and cached[0] == generation:
                return cached[1], cached[2]
            units = self._corpus(namespace)
            ids = [unit.id for unit in units]
            index = BM25Okapi([list(unit.tokens) for unit in units]) if units else None
            self._cache[namespace] = (generation, ids, index)
            return ids, index

    def evict(self, namespace: str) -> None:
        """Drop the namespace's index (it is rebuilt on the next search)."""
        with self._lock:
            self._cache.pop(namespace, None)

    def search(self, namespace: str, query: str, k: int) -> list[tuple[str, float]]:
        """Top ``k`` (id, BM25 score) with a positive score, best first."""
        terms = tokenize(query)
        ids, index = self._index(namespace)
        if index is None or not terms or k <= 0:
            return []
        scores = np.asarray(index.get_scores(terms), dtype=np.float64)
        k = min(k, len(ids))
        top = np.argpartition(-scores, k - 1)[:k]
        ranked = sorted(top.tolist(), key=lambda i: (-scores[i], i))
        return [(ids[i], float(scores[i])) for i in ranked if scores[i] > 0]
