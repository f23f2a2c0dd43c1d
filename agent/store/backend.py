"""The relational side's contract: what ``MemoryStore`` asks of the database under it.

Units with their cues and provenance, typed edges, root units, fact clusters, the per-namespace
write generation and the maintenance a store's ``check`` needs, as intent-level operations by
aggregate.  ``agent.store.sqlite`` implements it on one SQLite file; a server database
(PostgreSQL) implements the same methods with the same guarantees:

- Every write is one transaction, and every write to a namespace moves its generation on, so
  derived indexes in any process notice it.
- The relational side is the source of truth for which memories exist: a unit is visible only
  once its row is committed.
- Edges are stored both ways (a causal edge's way back is ``caused_by``), in the namespace of
  both their ends.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ripplegraph.agent.memory import MemoryUnit, RootUnit, StoredItem
from ripplegraph.agent.store.derived import Changes
from ripplegraph.agent.store.edges import Edge, EdgeType, Pairs, WeightedPairs

Placement = Literal["rows", "collection"]
"""Where a namespace's vectors live: rows beside its units, or a Chroma collection of its own."""


class RelationalBackend(ABC):
    """Units, cues, edges, root units, clusters and generations of every namespace."""

    # --- the database ------------------------------------------------------------------------

    @abstractmethod
    def close(self) -> None:
        """Release the connection."""

    @abstractmethod
    def files(self) -> list[Path]:
        """The files on this machine that hold the database, with what it caches written out.

        Empty where they are not on this machine (a database server elsewhere).
        """

    @abstractmethod
    def writer(self) -> AbstractContextManager[object]:
        """The lock a multi-step write holds across processes (re-entrant within one).

        A write that spans the vectors and these tables, or reads degrees before it adds
        edges, holds it so that no other writer of the store interleaves.
        """

    @abstractmethod
    def scrub(self) -> bool:
        """After a forget: leave no copy of deleted rows that this can reach at its cost.

        Returns whether nothing is left for ``compact``.  Neither backend can say so: SQLite
        zeroes a deleted row where it was but keeps copies that page balancing made in pages'
        free space, PostgreSQL keeps dead rows in its table files, until ``compact`` rewrites
        them.
        """

    @abstractmethod
    def compact(self) -> bool:
        """Rewrite what holds deleted rows' bytes; whether nothing is left of them now."""

    @abstractmethod
    def meta(self, key: str) -> str | None:
        """A store-wide setting (e.g. the embedding model it was built with)."""

    @abstractmethod
    def set_meta(self, key: str, value: str) -> None:
        """Record a store-wide setting."""

    @abstractmethod
    def tally(self, key: str, by: int) -> int:
        """Add ``by`` to the counter ``key`` (from 0) in one transaction; its new value."""

    @abstractmethod
    def generation(self, namespace: str) -> int:
        """A counter bumped by every write to the namespace (invalidates derived indexes)."""

    # --- units ---------------------------------------------------------------------------------

    @abstractmethod
    def existing(self, ids: Iterable[str], namespace: str | None = None) -> set[str]:
        """The subset of ``ids`` that are stored (as units of ``namespace``, when given)."""

    @abstractmethod
    def insert_units(self, units: Sequence[MemoryUnit]) -> None:
        """Insert units, their cue entries and their pending-link marks (ids must be new)."""

    @abstractmethod
    def units(self, namespace: str, ids: Iterable[str]) -> dict[str, MemoryUnit]:
        """Units by id, restricted to ``namespace``."""

    @abstractmethod
    def all_units(self, namespace: str) -> list[MemoryUnit]:
        """Every unit of the namespace in write order."""

    @abstractmethod
    def units_since(self, namespace: str, seq: int) -> Changes:
        """Units written after write sequence ``seq``, and how many deletions the namespace saw.

        A derived value grows by these units while the deletion count is the one it last saw;
        a deletion (which may also free a sequence number for reuse) makes it rebuild.
        """

    @abstractmethod
    def deletion_mark(self, namespace: str) -> tuple[int, int]:
        """The namespace's deletion count and highest write sequence, read together.

        What a forget hands the derived values it shrinks, so they know the deletion they
        shrink by is the only one since they last looked (``DerivedCache.forgotten``).
        """

    @abstractmethod
    def count_units(self, namespace: str) -> int:
        """Units stored in the namespace."""

    @abstractmethod
    def unit_ids(self, namespace: str) -> set[str]:
        """Ids of every unit in the namespace."""

    @abstractmethod
    def pending_links(self, namespace: str) -> list[str]:
        """Units written but not linked yet (an ingest stopped between write and link)."""

    @abstractmethod
    def mark_linked(self, ids: Iterable[str]) -> None:
        """The units' edges are committed: they no longer wait for linking."""

    @abstractmethod
    def covered_turns(self, namespace: str, session_id: str) -> set[str]:
        """Turn ids of a session that stored memories already cite."""

    @abstractmethod
    def ids_by_session(self, namespace: str, session_id: str) -> list[str]:
        """Units whose provenance is the given session, in write order."""

    @abstractmethod
    def ids_by_person(self, namespace: str, person: str) -> list[str]:
        """Units that name the person as a cue or were said by them, in write order."""

    # --- edges ---------------------------------------------------------------------------------

    @abstractmethod
    def edges_touching(self, ids: Iterable[str], edge_type: EdgeType) -> list[Edge]:
        """Every edge of ``edge_type`` with an endpoint in ``ids`` (one row per direction)."""

    @abstractmethod
    def degrees(self, ids: Iterable[str], edge_type: EdgeType) -> dict[str, int]:
        """Number of ``edge_type`` edges at each node in ``ids``."""

    @abstractmethod
    def replace_edges(
        self, namespace: str, edge_type: EdgeType, remove: Pairs, add: WeightedPairs
    ) -> None:
        """Drop and add edges of one type in one transaction, stored both ways."""

    @abstractmethod
    def neighbours(
        self, namespace: str, ids: Iterable[str], edge_types: Iterable[str]
    ) -> list[Edge]:
        """Edges leaving ``ids`` whose type is one of ``edge_types``, strongest first."""

    @abstractmethod
    def edges(self, namespace: str) -> set[Edge]:
        """Every edge of the namespace, one per stored direction."""

    @abstractmethod
    def count_edges(self, namespace: str) -> dict[str, int]:
        """Undirected edges in the namespace, by type."""

    # --- root units ----------------------------------------------------------------------------

    @abstractmethod
    def root_units(self, namespace: str) -> list[tuple[RootUnit, bool]]:
        """Consolidated root units of the namespace, each with whether it is stale, by id."""

    @abstractmethod
    def replace_root_units(self, namespace: str, units: Sequence[RootUnit]) -> None:
        """Store the namespace's new root-unit set (evidence must name stored units)."""

    @abstractmethod
    def add_pending_roots(self, namespace: str, ids: Iterable[str]) -> None:
        """Memories waiting for the next root consolidation batch."""

    @abstractmethod
    def pending_roots(self, namespace: str) -> list[str]:
        """Memories not consolidated into root units yet, in write order."""

    @abstractmethod
    def clear_pending_roots(self, ids: Iterable[str]) -> None:
        """These memories are consolidated."""

    # --- fact clusters -------------------------------------------------------------------------

    @abstractmethod
    def clusters(self, namespace: str) -> dict[int, tuple[np.ndarray, int]]:
        """Fact clusters of the namespace: id → (centroid sum, size)."""

    @abstractmethod
    def assign_clusters(
        self, namespace: str, members: dict[str, int], clusters: dict[int, tuple[np.ndarray, int]]
    ) -> None:
        """Record new members and the updated clusters in one transaction."""

    @abstractmethod
    def cluster_members(self, namespace: str, cluster_id: int) -> list[str]:
        """Ids in one cluster, in write order."""

    @abstractmethod
    def clusters_of(self, ids: Iterable[str]) -> dict[str, set[int]]:
        """Cluster ids holding any of ``ids``, by namespace."""

    @abstractmethod
    def reset_cluster(
        self, namespace: str, cluster_id: int, centroid: np.ndarray | None, size: int
    ) -> None:
        """Replace a cluster's centroid sum and size (``None`` deletes the cluster)."""

    # --- items a key-value client put ---------------------------------------------------------

    @abstractmethod
    def save_item(
        self,
        namespace: str,
        key: str,
        value: dict[str, Any],
        unit_ids: Sequence[str],
        created_at: datetime | None = None,
        ttl_minutes: float | None = None,
        expires_at: datetime | None = None,
    ) -> StoredItem:
        """Store (or replace) an item's value and the units made of it.

        ``created_at`` defaults to the stored item's (a replaced one keeps it), else now.
        ``expires_at`` defaults to now plus ``ttl_minutes``; without either it never expires.
        """

    @abstractmethod
    def items(self, namespace: str, keys: Iterable[str] | None = None) -> list[StoredItem]:
        """The namespace's items (those with ``keys``, or all), oldest update first."""

    @abstractmethod
    def item_keys(self, namespace: str, unit_ids: Iterable[str]) -> dict[str, str]:
        """The key of the item each of ``unit_ids`` was made of (units of none are absent)."""

    @abstractmethod
    def delete_item(self, namespace: str, key: str) -> bool:
        """Delete an item's value and links (not its units); whether it existed."""

    @abstractmethod
    def begin_put(self, namespace: str, key: str, intent: dict[str, Any]) -> None:
        """Log a put about to write memories; saving or deleting the item clears it."""

    @abstractmethod
    def unfinished_puts(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(namespace, key, intent) of every logged put whose item was not saved since.

        Puts set aside (``set_aside_put``) are not among them.
        """

    @abstractmethod
    def set_aside_put(self, namespace: str, key: str, failure: str) -> None:
        """Mark a logged put as one that cannot be finished, and why."""

    @abstractmethod
    def puts_set_aside(self) -> list[tuple[str, str, dict[str, Any], str]]:
        """(namespace, key, intent, failure) of every put set aside."""

    @abstractmethod
    def drop_put(self, namespace: str, key: str) -> None:
        """Forget a logged put (its item, if saved, stays)."""

    @abstractmethod
    def refresh_items(self, namespace: str, keys: Iterable[str], now: datetime) -> None:
        """Restart the time to live of those items that have one, from ``now``."""

    @abstractmethod
    def expired_items(self, now: datetime) -> list[tuple[str, str]]:
        """(namespace, key) of every item whose time to live ran out by ``now``."""

    # --- vectors kept in rows, and where each namespace's vectors live ------------------------

    @abstractmethod
    def placement(self, namespace: str) -> Placement | None:
        """Where the namespace's vectors live; ``None`` for one not placed yet."""

    @abstractmethod
    def place(self, namespace: str, placement: Placement) -> None:
        """Record where the namespace's vectors live (registering the namespace)."""

    @abstractmethod
    def in_collections(self) -> list[str]:
        """Namespaces whose vectors are in collections of their own."""

    @abstractmethod
    def unplaced(self) -> list[str]:
        """Registered namespaces with no recorded placement (written before version 4)."""

    @abstractmethod
    def insert_vectors(self, namespace: str, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Write vector rows of the namespace; writing an id again replaces its row."""

    @abstractmethod
    def vectors(self, namespace: str, ids: Iterable[str]) -> dict[str, np.ndarray]:
        """Vector rows by id, of committed units of the namespace only."""

    @abstractmethod
    def namespace_vectors(
        self, namespace: str, *, committed: bool = True
    ) -> tuple[list[str], np.ndarray]:
        """The namespace's vector rows as ids and a matrix: of committed units, in write order.

        With ``committed=False`` every row, with a unit or not (a promotion moves them all).
        """

    @abstractmethod
    def delete_vectors(self, namespace: str, ids: Iterable[str]) -> None:
        """Delete vector rows of the namespace (ids without one are ignored)."""

    @abstractmethod
    def vector_ids(self, namespace: str) -> set[str]:
        """Ids of every vector row of the namespace, with or without a unit."""

    @abstractmethod
    def vector_namespaces(self) -> list[str]:
        """Namespaces holding a vector row."""

    # --- what compactions owe ----------------------------------------------------------------

    @abstractmethod
    def owe(self, parts: Iterable[str], since: float) -> None:
        """Record that these parts hold forgotten bytes since ``since`` (the oldest is kept)."""

    @abstractmethod
    def debts(self) -> dict[str, float]:
        """Every part owed a compaction, with the time its debt began, oldest first."""

    @abstractmethod
    def settle(self, parts: Iterable[str]) -> None:
        """These parts are compacted."""

    # --- namespaces: forgetting, copying, checking ---------------------------------------------

    @abstractmethod
    def delete_units(self, namespace: str, ids: Iterable[str]) -> list[str]:
        """Delete units of ``namespace`` and everything that refers to them, in one transaction.

        Cue entries, edges both ways, vector rows, pending marks, cluster membership and every
        item a unit was made of (its value quotes the unit) go; root units lose
        the evidence (one left with none is deleted, one with some left is marked stale until
        consolidation rewrites it).  Returns the ids that were deleted.
        """

    @abstractmethod
    def drop_namespace(self, namespace: str) -> list[str]:
        """Delete every row of the namespace; returns its unit ids (it stays registered)."""

    @abstractmethod
    def copy_namespace(self, source: str, target: str, ids: dict[str, str]) -> None:
        """Copy units, cue entries and edges of ``source`` into ``target`` (may be ``source``).

        ``ids`` maps each source id to copy to its new id; edges are copied among those units.
        """

    @abstractmethod
    def namespaces(self) -> list[str]:
        """Every namespace that ever held a unit (a dropped one stays with no units).

        Units of a namespace missing from the registry (a damaged store) count too, so that
        ``check --repair`` never takes their vectors for a stray collection.
        """

    @abstractmethod
    def held_namespaces(
        self, prefix: str | None = None, limit: int | None = None, offset: int = 0
    ) -> list[str]:
        """Namespaces holding a unit or an item now, by name, one page of them.

        ``prefix`` keeps a namespace and those below it (``prefix/…``).  A page costs what
        it lists plus a look at each namespace it passes over, never a count of their units.
        """

    @abstractmethod
    def dangling(self) -> dict[str, int]:
        """Counts of every kind of broken reference; all zero in a consistent store."""

    @abstractmethod
    def repair_references(self) -> None:
        """Remove what ``dangling`` counts, in one transaction; every generation moves on.

        Rows that reference missing units (or cross namespaces, or have lost their reverse
        edge) are deleted; forgotten evidence leaves root units as forgetting does; units of
        an unregistered namespace get their namespace registered, never deleted.
        """
