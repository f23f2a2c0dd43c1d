"""Where each namespace's vectors live: rows beside its units, or a Chroma collection.

Most namespaces are one user's memory, tens to hundreds of memories: a Chroma collection each
cost 0.2 MB of disk, four files and a resident index per user, and a process died near 8,000
users.  So a namespace's vectors are rows of the relational store (``unit_vectors``), searched
exactly, until the namespace holds more than ``threshold`` vectors; it is then *promoted* to a
collection of its own, where HNSW pays for itself.  A namespace far below the threshold again,
or one a store of an earlier version kept in a collection, moves back to rows in a compaction.

This class is the one seam every vector read and write goes through, and every call names the
namespace: rows are read only with their namespace and only for its committed units; a
collection belongs to one namespace.  It also records what a forget leaves for a compaction
(``relational.owe``): a collection's deleted vectors, Chroma's catalog.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from ripplegraph.agent.store.backend import Placement, RelationalBackend
from ripplegraph.agent.store.top import best
from ripplegraph.agent.store.vectors import VectorIndex

COLLECTION_DEBT = "collection:"
"""Debt part prefix: the namespace's collection holds deleted vectors until it is flushed."""
CATALOG_DEBT = "chroma catalog"
"""Debt part: embedded Chroma's SQLite file holds deleted rows until it is vacuumed."""
DEMOTE_BELOW = 4
"""A namespace in a collection moves back to rows below ``threshold / DEMOTE_BELOW`` vectors."""
DELETIONS = "collection deletions:"
"""Meta counter prefix: vectors deleted from a namespace's collection since it was built."""
REBUILD_AFTER = 1000
"""Deleted vectors a collection holds before a compaction rebuilds it (or as many as live)."""


def nearest(
    ids: Sequence[str], matrix: np.ndarray, queries: np.ndarray, k: int
) -> list[list[tuple[str, float]]]:
    """The ``k`` rows of ``matrix`` most similar to each query (unit vectors: cosine), exactly."""
    if k <= 0 or not ids:
        return [[] for _ in range(len(queries))]
    scores = np.asarray(queries, dtype=np.float32) @ matrix.T
    return [[(ids[i], float(row[i])) for i in best(row, k)] for row in scores]


class VectorLayout:
    """Every namespace's vectors, in rows or in its own collection, behind one interface."""

    def __init__(self, relational: RelationalBackend, chroma: VectorIndex, threshold: int) -> None:
        self.relational = relational
        self.chroma = chroma
        self.threshold = threshold
        """Vectors a namespace may keep in rows; past it, a collection of its own (0: always)."""

    # --- placement ---------------------------------------------------------------------------

    def placement(self, namespace: str) -> Placement:
        """Where the namespace's vectors are; a namespace not placed yet gets the default."""
        found = self.relational.placement(namespace)
        if found is None:
            return "collection" if self.threshold == 0 else "rows"
        return found

    def _placed(self, namespace: str) -> Placement:
        """The placement, recorded (a write's: the namespace is about to hold vectors)."""
        found = self.relational.placement(namespace)
        if found is None:
            found = self.placement(namespace)
            self.relational.place(namespace, found)
        return found

    def place_unplaced(self) -> int:
        """Record where the vectors of namespaces without a placement are; how many there were.

        A store written before placements were recorded kept every namespace's vectors in a
        collection of its own, and a repaired store may register a namespace it found units
        of: such a namespace is in a collection if it has one, else in rows.
        """
        unplaced = self.relational.unplaced()
        if unplaced:
            held = set(self.chroma.namespaces())
            for namespace in unplaced:
                self.relational.place(namespace, "collection" if namespace in held else "rows")
        return len(unplaced)

    # --- writes --------------------------------------------------------------------------------

    def upsert(self, namespace: str, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Write vectors; writing an id again replaces it.  May promote the namespace."""
        if not len(ids):
            return
        if self._placed(namespace) == "collection":
            self.chroma.upsert(namespace, ids, vectors)
            return
        self.relational.insert_vectors(namespace, ids, vectors)
        if len(self.relational.vector_ids(namespace)) > self.threshold:
            self.promote(namespace)

    def promote(self, namespace: str) -> None:
        """Move the namespace's vector rows into a collection of its own.

        The collection is filled first, then the placement changes, then the rows go: a crash
        in between leaves rows or a collection that ``check`` reports and ``repair`` removes.
        """
        ids, matrix = self.relational.namespace_vectors(namespace, committed=False)
        if ids:
            self.chroma.upsert(namespace, ids, matrix)
        self.relational.place(namespace, "collection")
        self.relational.delete_vectors(namespace, ids)

    def demote(self, namespace: str) -> None:
        """Move a collection's vectors into rows and drop the collection."""
        ids = sorted(self.chroma.ids(namespace))
        found = self.chroma.embeddings(namespace, ids)
        if found:
            kept = sorted(found)
            self.relational.insert_vectors(namespace, kept, np.stack([found[i] for i in kept]))
        self.relational.place(namespace, "rows")
        self._drop_collection(namespace)

    def delete(self, namespace: str, ids: Sequence[str]) -> None:
        """Delete vectors by id; a collection's stay in its files until it is flushed.

        A forget has already deleted the rows of its units (``delete_units``, in the same
        transaction as the units); this deletes a collection's vectors, or rows on their own.
        """
        if not len(ids):
            return
        if self.placement(namespace) == "rows":
            self.relational.delete_vectors(namespace, ids)
            return
        self.chroma.delete(namespace, ids)
        self.relational.owe([COLLECTION_DEBT + namespace], time.time())
        self.relational.tally(DELETIONS + namespace, len(ids))
        self._owe_catalog()

    def drop(self, namespace: str) -> None:
        """Delete every vector of the namespace (its rows, and its collection if it has one)."""
        self.relational.delete_vectors(namespace, self.relational.vector_ids(namespace))
        if self.chroma.exists(namespace):
            self._drop_collection(namespace)

    def _drop_collection(self, namespace: str) -> None:
        self.chroma.drop(namespace)
        self.relational.set_meta(DELETIONS + namespace, "0")
        self._owe_catalog()

    def _owe_catalog(self) -> None:
        if self.chroma.embedded:
            self.relational.owe([CATALOG_DEBT], time.time())

    # --- reads ---------------------------------------------------------------------------------

    def query(
        self,
        namespace: str,
        vectors: np.ndarray,
        k: int,
        rows: Callable[[], tuple[list[str], np.ndarray]] | None = None,
    ) -> list[list[tuple[str, float]]]:
        """For each query vector, the ``k`` nearest of the namespace's committed memories.

        Rows are searched exactly, joined to the namespace's units (``rows`` may hand over a
        matrix of them kept in memory); a collection's hits are kept only where they name one
        of its committed units (an interrupted write, or anything else in the collection, is
        dropped).
        """
        if self.placement(namespace) == "collection":
            found = self.chroma.query(namespace, vectors, k)
            kept = self._committed(namespace, {mid for hits in found for mid, _ in hits})
            return [[(mid, s) for mid, s in hits if mid in kept] for hits in found]
        ids, matrix = rows() if rows is not None else self.relational.namespace_vectors(namespace)
        return nearest(ids, matrix, vectors, k)

    def embeddings(self, namespace: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors of the namespace's committed memories, by id (others are absent)."""
        if self.placement(namespace) == "collection":
            found = self.chroma.embeddings(namespace, ids)
            kept = self._committed(namespace, set(found))
            return {mid: vector for mid, vector in found.items() if mid in kept}
        return self.relational.vectors(namespace, ids)

    def _committed(self, namespace: str, ids: set[str]) -> set[str]:
        return self.relational.existing(ids, namespace) if ids else set()

    def ids(self, namespace: str) -> set[str]:
        """Every vector id stored for the namespace where its vectors live."""
        if self.placement(namespace) == "collection":
            return self.chroma.ids(namespace)
        return self.relational.vector_ids(namespace)

    def misplaced(self, namespace: str) -> set[str]:
        """Vector ids of the namespace found where its vectors do not live (a cut-short move)."""
        if self.placement(namespace) == "collection":
            return self.relational.vector_ids(namespace)
        return self.chroma.ids(namespace)

    def count(self, namespace: str) -> int:
        """Vectors stored for the namespace."""
        return len(self.ids(namespace))

    def namespaces(self) -> list[str]:
        """Namespaces holding a vector anywhere (rows or a collection of this store)."""
        return sorted(set(self.relational.vector_namespaces()) | set(self.chroma.namespaces()))

    # --- compaction ----------------------------------------------------------------------------

    def compact(self, parts: Iterable[str]) -> None:
        """Flush (or rebuild) the collections owed it, then vacuum Chroma's catalog if owed.

        Chroma never reuses a deleted element's slot: a collection under churn grows with
        every vector it ever held.  One that holds more deleted elements than live ones (and
        at least ``REBUILD_AFTER``) is rebuilt from its live vectors instead of flushed, a cost
        the deletions since its last rebuild have paid for.
        """
        parts = list(parts)
        for part in parts:
            if not part.startswith(COLLECTION_DEBT):
                continue
            namespace = part[len(COLLECTION_DEBT) :]
            deleted = int(self.relational.meta(DELETIONS + namespace) or 0)
            if deleted >= max(REBUILD_AFTER, self.chroma.count(namespace)):
                self.chroma.rebuild(namespace)
                self.relational.set_meta(DELETIONS + namespace, "0")
            else:
                self.chroma.flush(namespace)
        if CATALOG_DEBT in parts:
            self.chroma.compact()

    def small_collections(self) -> list[str]:
        """Namespaces in collections that hold too few memories for one, smallest first."""
        if self.threshold == 0:
            return []
        below = self.threshold / DEMOTE_BELOW
        counted = [(self.relational.count_units(ns), ns) for ns in self.relational.in_collections()]
        return [ns for count, ns in sorted(counted) if count < below]
