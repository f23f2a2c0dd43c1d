"""What a store keeps beside the units: items, puts in flight, and what ingest maintains.

Key-value items, puts cut short, link and root queues, edges, clusters and root units.
``MemoryStore`` inherits these; each is one call to the relational side, under the write lock
where it writes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ripplegraph.agent.memory import RootUnit, StoredItem
from ripplegraph.agent.memory.items import checked_ttl
from ripplegraph.agent.store.backend import RelationalBackend
from ripplegraph.agent.store.edges import Edge, EdgeType, Pairs, WeightedPairs


class Records:
    """Items, puts, edges, clusters and root units, over a ``MemoryStore``'s relational side."""

    relational: RelationalBackend
    _write_lock: AbstractContextManager[object]

    # --- items a key-value client put ------------------------------------------------------

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
        """Keep a put value and the units made of it (forgetting one of them deletes it).

        With ``ttl_minutes`` (or an ``expires_at`` an export kept) the item, its units with it,
        is forgotten once its time runs out: hidden at once, erased by ``sweep_expired``.
        """
        with self._write_lock:
            return self.relational.save_item(
                namespace, key, value, unit_ids, created_at, checked_ttl(ttl_minutes), expires_at
            )

    def items(self, namespace: str, keys: Iterable[str] | None = None) -> list[StoredItem]:
        """The namespace's live put items (those with ``keys``, or all), oldest update first.

        An item past its time to live is gone for every reader, swept or not.
        """
        now = datetime.now(UTC)
        return [i for i in self.relational.items(namespace, keys) if not i.expired(now)]

    def refresh_items(self, namespace: str, keys: Iterable[str]) -> None:
        """Restart the time to live of those items that have one (a read that refreshes)."""
        self.relational.refresh_items(namespace, keys, datetime.now(UTC))

    def item_keys(self, namespace: str, unit_ids: Iterable[str]) -> dict[str, str]:
        """The key of the put item each unit was made of (other units are absent)."""
        return self.relational.item_keys(namespace, unit_ids)

    def begin_put(self, namespace: str, key: str, intent: dict[str, Any]) -> None:
        """Log a put that is about to write memories, until ``save_item`` saves its item.

        A put logged and not saved was cut short (by a crash, a kill, a lost server): its
        memories may be half written.  ``check`` counts such puts; the ``BaseStore`` over this
        store finishes them (``RippleGraphStore.finish_puts``) when it opens and before its
        next put.
        """
        with self._write_lock:
            self.relational.begin_put(namespace, key, intent)

    def unfinished_puts(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(namespace, key, intent) of every put logged by ``begin_put`` and not saved since.

        A put set aside is not among them: no later put or open tries it again.
        """
        return self.relational.unfinished_puts()

    def set_aside_put(self, namespace: str, key: str, failure: str) -> None:
        """Keep a logged put that failed to finish out of every later write's way.

        ``check`` reports it; ``check --repair`` withdraws it (``drop_put`` after its
        memories are forgotten).
        """
        with self._write_lock:
            self.relational.set_aside_put(namespace, key, failure)

    def puts_set_aside(self) -> list[tuple[str, str, dict[str, Any], str]]:
        """(namespace, key, intent, why) of every put set aside."""
        return self.relational.puts_set_aside()

    def drop_put(self, namespace: str, key: str) -> None:
        """Forget the log of a put (withdrawn, or cancelled before it wrote anything)."""
        with self._write_lock:
            self.relational.drop_put(namespace, key)

    def turn_units(self, namespace: str, session_id: str, turn_ids: Iterable[str]) -> list[str]:
        """Ids of the session's units that cite any of ``turn_ids``."""
        wanted = set(turn_ids)
        units = self.relational.units(
            namespace, self.relational.ids_by_session(namespace, session_id)
        )
        return sorted(u.id for u in units.values() if wanted & set(u.provenance.turn_ids))

    def holding_namespaces(
        self, prefix: str | None = None, limit: int | None = None, offset: int = 0
    ) -> list[str]:
        """Namespaces that hold a unit or a put item now, by name: one page, under ``prefix``.

        ``namespaces`` keeps emptied ones; this lists what a client can find.
        """
        return self.relational.held_namespaces(prefix, limit, offset)

    def known(self, namespace: str) -> bool:
        """Whether the namespace ever held a memory (it is registered, or holds units)."""
        return bool(self.relational.generation(namespace) or self.relational.count_units(namespace))

    # --- what ingest maintains beside the units --------------------------------------------

    def namespaces(self) -> list[str]:
        """Every namespace that ever held a unit."""
        return self.relational.namespaces()

    def generation(self, namespace: str) -> int:
        """The namespace's write generation: any write or forget changes it."""
        return self.relational.generation(namespace)

    def unit_ids(self, namespace: str) -> set[str]:
        """Ids of the namespace's units."""
        return self.relational.unit_ids(namespace)

    def covered_turns(self, namespace: str, session_id: str) -> set[str]:
        """Turn ids of a session that stored memories already cite (a resumed ingest)."""
        return self.relational.covered_turns(namespace, session_id)

    def pending_links(self, namespace: str) -> list[str]:
        """Units written but not linked yet (an ingest stopped between write and link)."""
        return self.relational.pending_links(namespace)

    def mark_linked(self, ids: Iterable[str]) -> None:
        """The units' edges are committed: they no longer wait for linking."""
        self.relational.mark_linked(ids)

    def edges(self, namespace: str) -> set[Edge]:
        """Every edge of the namespace, one per stored direction."""
        return self.relational.edges(namespace)

    def edges_touching(self, ids: Iterable[str], edge_type: EdgeType) -> list[Edge]:
        """Edges of one type with an end in ``ids``."""
        return self.relational.edges_touching(ids, edge_type)

    def degrees(self, ids: Iterable[str], edge_type: EdgeType) -> dict[str, int]:
        """Edges of one type per unit id."""
        return self.relational.degrees(ids, edge_type)

    def replace_edges(
        self, namespace: str, edge_type: EdgeType, remove: Pairs, add: WeightedPairs
    ) -> None:
        """Drop and add edges of one type in one transaction, each stored both ways."""
        self.relational.replace_edges(namespace, edge_type, remove, add)

    def clusters(self, namespace: str) -> dict[int, tuple[np.ndarray, int]]:
        """Fact clusters of the namespace: id → (centroid sum, size)."""
        return self.relational.clusters(namespace)

    def assign_clusters(
        self, namespace: str, members: dict[str, int], clusters: dict[int, tuple[np.ndarray, int]]
    ) -> None:
        """Record new cluster members and the updated clusters in one transaction."""
        self.relational.assign_clusters(namespace, members, clusters)

    def cluster_members(self, namespace: str, cluster_id: int) -> list[str]:
        """Ids in one cluster, in write order."""
        return self.relational.cluster_members(namespace, cluster_id)

    def root_units(self, namespace: str, *, include_stale: bool = False) -> list[RootUnit]:
        """Root units a model consolidated, by id.

        Stale ones (awaiting re-consolidation after a forget) only when asked for: their rules
        may restate what was forgotten.
        """
        return [
            unit
            for unit, stale in self.relational.root_units(namespace)
            if include_stale or not stale
        ]

    def replace_root_units(self, namespace: str, units: Sequence[RootUnit]) -> None:
        """Store the namespace's new root-unit set (evidence must name stored units)."""
        self.relational.replace_root_units(namespace, units)

    def add_pending_roots(self, namespace: str, ids: Iterable[str]) -> None:
        """Memories waiting for the next root consolidation batch."""
        self.relational.add_pending_roots(namespace, ids)

    def pending_roots(self, namespace: str) -> list[str]:
        """Memories not consolidated into root units yet, in write order."""
        return self.relational.pending_roots(namespace)

    def clear_pending_roots(self, ids: Iterable[str]) -> None:
        """These memories are consolidated."""
        self.relational.clear_pending_roots(ids)
