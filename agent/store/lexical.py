"""The lexical channel: Okapi BM25 over each namespace's memory texts.

An index is rebuilt lazily, the first time a namespace is searched after a write (the store's
per-namespace generation counter says when), never per query.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable

import numpy as np
from rank_bm25 import BM25Okapi

_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
# A compact English stop-word list: function words that carry no topic.
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before
    being below between both but by can can't cannot could couldn't did didn't do does doesn't
    doing don't down during each few for from further had hadn't has hasn't have haven't having
    he he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm
    i've if in into is isn't it it's its itself let's me more most mustn't my myself no nor not
    of off on once only or other ought our ours ourselves out over own same shan't she she'd
    she'll she's should shouldn't so some such than that that's the their theirs them
    themselves then there there's these they they'd they'll they're they've this those through
    to too under until up very was wasn't we we'd we'll we're we've were weren't what what's
    when when's where where's which while who who's whom why why's with won't would wouldn't
    you you'd you'll you're you've your yours yourself yourselves just also really so yeah oh
    hey hi
    """.split()  # noqa: SIM905 (a word list reads better as text)
)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens without stop words."""
    return [t for t in _TOKEN.findall(text.lower().replace("’", "'")) if t not in STOP_WORDS]


class LexicalIndex:
    """Per-namespace BM25 indexes, cached by the namespace's write generation."""

    def __init__(
        self,
        corpus: Callable[[str], list[tuple[str, str]]],
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
            rows = self._corpus(namespace)
            ids = [mid for mid, _ in rows]
            tokens = [tokenize(text) for _, text in rows]
            index = BM25Okapi(tokens) if rows else None
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
