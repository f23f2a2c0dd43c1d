"""The lexical channel: Okapi BM25 over each namespace's memory texts, grown in place.

rank-bm25's ``BM25Okapi`` is the reference: ``Bm25`` scores exactly as it does (k1 = 1.5,
b = 0.75, negative idf floored at 0.25 × the mean idf), but keeps per-term postings, so a
write adds its documents instead of rebuilding the whole namespace's index, and a query
touches only the documents that hold its terms.  A forgotten document leaves its slot
empty (out of every posting, the counts and the average length), so scores stay exactly
rank-bm25's over the documents that remain.  The store keeps one per namespace in a
``DerivedCache`` that follows the namespace's writes and shrinks with its forgets.
"""

from __future__ import annotations

import threading
from array import array
from collections import Counter
from collections.abc import Sequence

import numpy as np

from ripplegraph.agent.memory import MemoryUnit
from ripplegraph.agent.memory.text import tokenize
from ripplegraph.agent.store.top import best

K1 = 1.5
B = 0.75
EPSILON = 0.25


class Bm25:
    """BM25Okapi's scores over documents added one at a time (thread-safe).

    Lengths and postings are typed ``array`` buffers that grow in place and that numpy reads
    without a copy, so a query after a write costs no conversion of a common term's postings
    (tens of thousands of documents at 100k units).  A removed document's slot stays, empty
    (its id ``""``, its length 0), until more slots are empty than full: then ``without``
    declines and the index is built again, so the slots cost at most twice the documents.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.ids: list[str] = []
        self._position: dict[str, int] = {}
        self._lengths = array("d")
        self._postings: dict[str, tuple[array[int], array[float]]] = {}
        self._floor: float | None = None

    @classmethod
    def of(cls, units: Sequence[MemoryUnit]) -> Bm25:
        """An index of the units' tokens."""
        return cls().extended(units)

    def extended(self, units: Sequence[MemoryUnit]) -> Bm25:
        """The units appended to this index, in place; returns the index."""
        with self._lock:
            for unit in units:
                self._add(unit.id, unit.tokens)
        return self

    def add(self, doc_id: str, tokens: Sequence[str]) -> None:
        """Append one document."""
        with self._lock:
            self._add(doc_id, tokens)

    def without(self, units: Sequence[MemoryUnit]) -> Bm25 | None:
        """The units' documents removed, in place; None when the index should be rebuilt."""
        with self._lock:
            for unit in units:
                if not self._remove(unit.id, unit.tokens):
                    return None
            return self if 2 * len(self._position) >= len(self.ids) else None

    def remove(self, doc_id: str, tokens: Sequence[str]) -> bool:
        """Remove a document added with these tokens; False if its postings disagree."""
        with self._lock:
            return self._remove(doc_id, tokens)

    def _remove(self, doc_id: str, tokens: Sequence[str]) -> bool:
        index = self._position.get(doc_id)
        if index is None:  # written after the index last grew: nothing to remove
            return True
        for term in Counter(tokens):
            postings = self._postings.get(term)
            at = -1 if postings is None else find_position(postings[0], index)
            if postings is None or at < 0:
                return False
            del postings[0][at], postings[1][at]
            if not postings[0]:
                del self._postings[term]
        del self._position[doc_id]
        self.ids[index] = ""
        self._lengths[index] = 0.0
        self._floor = None
        return True

    def _add(self, doc_id: str, tokens: Sequence[str]) -> None:
        index = len(self.ids)
        self.ids.append(doc_id)
        self._position[doc_id] = index
        self._lengths.append(len(tokens))
        for term, frequency in Counter(tokens).items():
            docs, frequencies = self._postings.setdefault(term, (array("q"), array("d")))
            docs.append(index)
            frequencies.append(frequency)
        self._floor = None

    def _idf(self, term: str) -> float:
        postings = self._postings.get(term)
        if postings is None:
            return 0.0
        size, df = len(self._position), len(postings[0])
        idf = float(np.log(size - df + 0.5) - np.log(df + 0.5))
        if idf >= 0:
            return idf
        if self._floor is None:  # ε × the mean idf over the whole vocabulary
            dfs = np.fromiter((len(d) for d, _ in self._postings.values()), dtype=np.float64)
            self._floor = EPSILON * float(np.mean(np.log(size - dfs + 0.5) - np.log(dfs + 0.5)))
        return self._floor

    def sole_holders(self, terms: Sequence[str]) -> dict[str, int]:
        """The documents that alone hold one of ``terms``, and how many such terms each holds."""
        with self._lock:
            held: Counter[str] = Counter()
            for term in set(terms):
                postings = self._postings.get(term)
                if postings is not None and len(postings[0]) == 1:
                    held[self.ids[postings[0][0]]] += 1
            return dict(held)

    def scores(self, terms: Sequence[str]) -> tuple[list[str], np.ndarray]:
        """The document ids and each one's score for the terms (repeated terms count again)."""
        with self._lock:
            return list(self.ids), self._scores(terms)

    def top(self, terms: Sequence[str], k: int) -> list[tuple[str, float]]:
        """The ``k`` best (id, score) with a positive score, best first, ties by position.

        Only the chosen ids are read, under the lock: copying every id, as ``scores`` does,
        costs half a millisecond at 100k documents.
        """
        with self._lock:
            scores = self._scores(terms)
            return [(self.ids[i], float(scores[i])) for i in best(scores, k) if scores[i] > 0]

    def _scores(self, terms: Sequence[str]) -> np.ndarray:
        score = np.zeros(len(self.ids))
        if not self._position:
            return score
        # Views of the buffers; none outlives this call, which the buffers' growth requires.
        lengths = np.frombuffer(self._lengths, dtype=np.float64)
        average = float(lengths.sum()) / len(self._position)
        for term in terms:
            if term not in self._postings:
                continue
            docs, frequencies = self._postings[term]
            docs_array = np.frombuffer(docs, dtype=np.int64)
            tf = np.frombuffer(frequencies, dtype=np.float64)
            norm = K1 * (1 - B + B * lengths[docs_array] / average)
            score[docs_array] += self._idf(term) * (tf * (K1 + 1) / (tf + norm))
        return score


def sole_holders(index: Bm25, query: str, k: int) -> list[tuple[str, float]]:
    """Up to ``k`` documents that alone hold an identifier of the query, most held first.

    An identifier is a term with a digit in it (an order number, a reference code, a date's
    year); one that only one document holds names that document.  The score is how many of
    the query's identifiers it alone holds.  Words without a digit do not count: a word the
    question shares with one memory only is as often incidental (an advice question's
    "Denver" held by the memory that only looks relevant) as it is the memory's name.
    """
    held = index.sole_holders([t for t in tokenize(query) if any(c.isdigit() for c in t)])
    ordered = sorted(held.items(), key=lambda item: (-item[1], item[0]))
    return [(doc, float(count)) for doc, count in ordered[: max(0, k)]]


def find_position(positions: array[int], index: int) -> int:
    """Where ``index`` is in an ascending posting list, or -1."""
    at = int(np.searchsorted(np.frombuffer(positions, dtype=np.int64), index))
    return at if at < len(positions) and positions[at] == index else -1


def ranked(index: Bm25, query: str, k: int) -> list[tuple[str, float]]:
    """Top ``k`` (id, BM25 score) with a positive score, best first."""
    terms = tokenize(query)
    if not terms or k <= 0:
        return []
    return index.top(terms, k)
