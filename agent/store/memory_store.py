"""``MemoryStore``: one facade over the vector, lexical, cue and edge channels of a store.

A store is a directory: ``graph.sqlite`` (units, cue indexes, edges, and the vectors of small
namespaces), Chroma's files for the collections of large ones (unless a Chroma server is
used) and a lock file that serialises writers across processes.  Every read and write names a
namespace.  What a forget leaves in files it cannot rewrite at its own cost is owed to a
compaction that runs within the store's erasure window.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from filelock import FileLock
from langchain_core.embeddings import Embeddings

from ripplegraph.agent.errors import NotFoundError, StoreError
from ripplegraph.agent.items import checked_ttl
from ripplegraph.agent.memory import MemoryUnit, RootUnit, StoredItem, TimeInterval
from ripplegraph.agent.models import DEFAULT_EMBEDDING, Embedder, load_embeddings
from ripplegraph.agent.paths import STORE_MARK
from ripplegraph.agent.store.backend import RelationalBackend
from ripplegraph.agent.store.cue_index import CueIndex, CueMatch
from ripplegraph.agent.store.derived import (
    DerivedCache,
    Shrink,
    evict_namespace,
    forgotten_in_namespace,
)
from ripplegraph.agent.store.edges import Edge, EdgeType, Pairs, WeightedPairs
from ripplegraph.agent.store.erasure import CHECKPOINTS, purge_threads, vacuum
from ripplegraph.agent.store.ids import memory_id
from ripplegraph.agent.store.lexical import Bm25, ranked, sole_holders
from ripplegraph.agent.store.postgres import PostgresBackend
from ripplegraph.agent.store.sqlite import SQLiteBackend
from ripplegraph.agent.store.vector_layout import VectorLayout
from ripplegraph.agent.store.vectors import VectorIndex
from ripplegraph.agent.text import normalise_cue

_log = logging.getLogger(__name__)
_VECTOR_CACHE_LIMIT = 50_000  # ≈ 80 MB of MiniLM vectors, most recently used kept
_ROWS = "vector rows"
_ROWS_CACHED = 100_000
"""Vector rows kept as namespaces' search matrices (≈ 150 MB of MiniLM), by recent use."""
COLLECTION_THRESHOLD = 2000
"""Vectors a namespace keeps in rows; one more and it gets a Chroma collection of its own."""
ERASURE_WINDOW_MINUTES = 10.0
"""How long after a forget its compaction may wait (``compact`` closes the window at once)."""
DEMOTIONS = 100
"""Namespaces a background compaction moves from a collection into rows, at most."""
RELATIONAL_DEBT = "relational"
"""Debt part: the relational side's files hold dead rows until its ``compact``."""
THREADS_DEBT = "threads"
"""Debt part: the CLI's checkpoints file holds purged threads' bytes in free space."""
S = TypeVar("S")
T = TypeVar("T")
_ENTRIES = 512  # values kept per derived cache: searches are keyed by free text


class Vocabulary:
    """A namespace's people and places with their unit counts, and its latest memory time.

    Edited in place under a lock (a write adds its units, a forget takes them away), so a
    forget costs what it removed; the end times are counted too, so forgetting the newest
    memory finds the latest among those left without reading the namespace.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, Counter[str]] = {"person": Counter(), "place": Counter()}
        self._ends: Counter[datetime] = Counter()
        self._latest: datetime | None = None

    @classmethod
    def of(cls, units: Sequence[MemoryUnit]) -> Vocabulary:
        """The vocabulary of the units."""
        return cls().extended(units)

    def extended(self, units: Sequence[MemoryUnit]) -> Vocabulary:
        """The units' cues added, in place; returns the vocabulary."""
        with self._lock:
            for unit in units:
                for kind, values in _cues(unit):
                    self._counts[kind].update(values)
                if unit.time is not None:
                    self._ends[unit.time.end] += 1
                    if self._latest is None or unit.time.end > self._latest:
                        self._latest = unit.time.end
        return self

    def without(self, units: Sequence[MemoryUnit]) -> Vocabulary:
        """The units' cues taken away, in place; returns the vocabulary."""
        with self._lock:
            for unit in units:
                for kind, values in _cues(unit):
                    self._counts[kind].subtract(values)
                    for value in values:
                        if self._counts[kind][value] <= 0:
                            del self._counts[kind][value]
                if unit.time is not None:
                    self._ends[unit.time.end] -= 1
                    if self._ends[unit.time.end] <= 0:
                        del self._ends[unit.time.end]
            if self._latest is not None and self._latest not in self._ends:
                self._latest = max(self._ends, default=None)
        return self

    @property
    def latest(self) -> datetime | None:
        """The end of the latest memory's time, if any memory has one."""
        with self._lock:
            return self._latest

    def ranked(self) -> tuple[list[str], list[str]]:
        """People, then places: most frequent first, ties by name."""
        with self._lock:
            people, places = (
                [v for v, _ in sorted(self._counts[kind].items(), key=lambda i: (-i[1], i[0]))]
                for kind in ("person", "place")
            )
        return people, places


def _cues(unit: MemoryUnit) -> list[tuple[str, set[str]]]:
    """The unit's people and places, each named once, as the vocabulary counts them."""
    return [
        (kind, {v for v in map(normalise_cue, values) if v})
        for kind, values in (("person", unit.people), ("place", unit.places))
    ]


@dataclass(frozen=True)
class Compaction:
    """What one ``compact`` did: the debts it settled, the namespaces moved into rows."""

    settled: list[str]
    demoted: list[str]
    seconds: float


@dataclass
class CheckReport:
    """What ``MemoryStore.check`` found.

    ``problems`` are broken references (a consistent store has none); ``leftovers`` are
    invisible remains of an interrupted write or forget, which no channel returns and
    ``repair`` removes; ``pending_links`` are stored units whose edges an interrupted ingest
    did not write yet (re-running the ingest, or ``check --repair``, links them).
    """

    units: int = 0
    namespaces: int = 0
    problems: dict[str, int] = field(default_factory=dict)
    leftovers: dict[str, int] = field(default_factory=dict)
    pending_links: dict[str, list[str]] = field(default_factory=dict)
    repaired: bool = False

    @property
    def consistent(self) -> bool:
        """No broken references."""
        return not any(self.problems.values())


CUE_CANDIDATES = 1000  # cue matches re-ranked by the query; bounds the vectors read


class MemoryStore:
    """Namespace-scoped memory storage and the retrieval channels over it."""

    def __init__(
        self,
        directory: Path,
        embedder: Embedder,
        chroma_url: str | None = None,
        database_url: str | None = None,
        *,
        collection_threshold: int = COLLECTION_THRESHOLD,
        erasure_window_minutes: float = ERASURE_WINDOW_MINUTES,
    ) -> None:
        self.directory = Path(directory)
        if self.directory.exists() and not self.directory.is_dir():
            raise StoreError(f"the store {self.directory} is a file; a store is a directory")
        self.directory.mkdir(parents=True, exist_ok=True)
        self.embedder = embedder
        # Two processes creating the same store at once would race in SQLite and Chroma setup.
        with FileLock(str(self.directory / STORE_MARK)):
            self.relational: RelationalBackend = (
                PostgresBackend(database_url)
                if database_url
                else SQLiteBackend(self.directory / "graph.sqlite")
            )
            recorded = self.relational.meta("embedding_model")
            if recorded is None:
                self.relational.set_meta("embedding_model", embedder.name)
            elif recorded != embedder.name:
                raise StoreError(
                    f"the store at {self.directory} was built with embeddings {recorded!r}, "
                    f"not {embedder.name!r}; open it with the same model or use a new store"
                )
            self.store_id = self.relational.meta("store_id") or uuid.uuid4().hex
            self.relational.set_meta("store_id", self.store_id)
            backend = "chroma-server" if chroma_url else "embedded"
            recorded = self.relational.meta("vectors")
            if recorded is None:
                self.relational.set_meta("vectors", backend)
            elif recorded != backend:
                where = (
                    "on a Chroma server: pass its --chroma-url"
                    if chroma_url is None
                    else ("in embedded Chroma: open it without a Chroma URL")
                )
                raise StoreError(f"the store at {self.directory} keeps its vectors {where}")
            chroma = (
                VectorIndex.remote(chroma_url, self.store_id)
                if chroma_url
                else VectorIndex.embedded_at(self.directory / "chroma", self.store_id)
            )
            threshold = self.relational.meta("collection_threshold")
            if threshold is None:  # chosen when the store is made, like its embeddings
                threshold = str(collection_threshold)
                self.relational.set_meta("collection_threshold", threshold)
            self.vectors = VectorLayout(self.relational, chroma, int(threshold))
            self.vectors.place_unplaced()
        self._write_lock = self.relational.writer()
        self._vector_cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._vector_cache_lock = threading.Lock()
        self._caches: dict[str, DerivedCache[Any]] = {}
        self._caches_lock = threading.Lock()
        self.erasure_window = erasure_window_minutes * 60.0
        """Seconds within which a compaction follows a forget (its erasure window)."""
        self._compaction: threading.Timer | None = None
        self._compaction_lock = threading.Lock()
        self._schedule_compaction()

    def write_lock(self) -> AbstractContextManager[object]:
        """The cross-process lock every writer holds (re-entrant within a process).

        A file beside ``graph.sqlite``, or a PostgreSQL advisory lock when the relational side
        is on a server, so writers on other machines wait too.
        """
        return self._write_lock

    # --- writes ----------------------------------------------------------------------------

    def add_units(self, units: Sequence[MemoryUnit]) -> list[str]:
        """Store the units not stored yet; returns their ids in input order.

        Vectors go first, then the SQLite rows in one transaction: a unit becomes visible only
        when its row commits, so a crash in between leaves nothing half-visible, and a retry
        upserts the same vector again.
        """
        with self._write_lock:
            unique = list({u.id: u for u in units}.values())
            existing = self.relational.existing(u.id for u in unique)
            new = [u for u in unique if u.id not in existing]
            if not new:
                return []
            vectors = self.embedder.documents([u.text for u in new])
            by_namespace: dict[str, list[int]] = {}
            for index, unit in enumerate(new):
                by_namespace.setdefault(unit.namespace, []).append(index)
            for namespace, indexes in by_namespace.items():
                self.vectors.upsert(
                    namespace,
                    [new[i].id for i in indexes],
                    vectors[indexes],
                )
            for index, unit in enumerate(new):
                self._cache_vectors(unit.namespace, {unit.id: vectors[index]})
            self.relational.insert_units(new)
            return [u.id for u in new]

    def clone_namespace(self, source: str, target: str) -> int:
        """Copy a namespace — vectors, units, cues, edges — under new ids; returns the count.

        Benchmarks use it to grow a store or to give every record its own copy of shared
        filler without embedding and linking the same text again.
        """
        with self._write_lock:
            if self.count_units(target):
                raise ValueError(f"namespace {target!r} is not empty")
            return self._copy(self.all_units(source), source, target, "")

    def replicate(self, namespace: str, ids: Sequence[str], tag: str) -> int:
        """Add copies of some of a namespace's units to it, under ids made with ``tag``.

        The scale benchmark grows one namespace this way: vectors, cues and the edges among
        the copied units are copied, not recomputed.
        """
        with self._write_lock:
            units = list(self.relational.units(namespace, ids).values())
            return self._copy(units, namespace, namespace, tag)

    def _copy(self, units: Sequence[MemoryUnit], source: str, target: str, tag: str) -> int:
        if not units:
            return 0
        ids = {
            u.id: memory_id(
                target,
                u.provenance.model_copy(update={"session_id": u.provenance.session_id + tag}),
                u.text,
            )
            for u in units
        }
        vectors = self.embeddings(source, [u.id for u in units])
        self.vectors.upsert(
            target, [ids[u.id] for u in units], np.stack([vectors[u.id] for u in units])
        )
        self.relational.copy_namespace(source, target, ids)
        return len(units)

    def drop_namespace(self, namespace: str) -> int:
        """Delete a whole namespace from every channel; returns how many units it held.

        The relational rows go first, so a crash in between leaves only invisible vectors.
        """
        with self._write_lock:
            units = self.relational.all_units(namespace)
            self.relational.drop_namespace(namespace)
            self.vectors.drop(namespace)
            self._forget_cached(namespace, units)
            self._erase_copies(units)
            return len(units)

    def forget(
        self,
        namespace: str,
        *,
        memory_ids: Iterable[str] = (),
        session: str | None = None,
        person: str | None = None,
        everything: bool = False,
    ) -> list[str]:
        """Delete memories from every channel; returns the ids forgotten.

        Exactly one selector: memory ids, a session, a person (units naming them or said by
        them), or ``everything`` in the namespace.  The rows, cue entries, vector rows and
        every edge touching the units go in one transaction (from then on no channel returns
        them), then a collection's vectors; root memories and the BM25 index are derived per
        write generation, so they lose the evidence at once.  Then the copies a delete leaves
        go that cost what was deleted (``_erase_copies``); the rest is owed to ``compact``.
        Nothing here reads or rewrites the rest of the namespace.  A crash between the steps
        leaves only invisible vectors, which ``check`` reports and ``repair`` removes.
        """
        wanted = list(memory_ids)
        chosen = sum([bool(wanted), session is not None, person is not None, everything])
        if chosen != 1:
            raise ValueError("forget needs exactly one of: memory ids, session, person, everything")
        with self._write_lock:
            if everything:
                units = self.relational.all_units(namespace)
                self.drop_namespace(namespace)
                return [u.id for u in units]
            if session is not None:
                wanted = self.relational.ids_by_session(namespace, session)
            elif person is not None:
                wanted = self.relational.ids_by_person(namespace, person)
            units = list(self.relational.units(namespace, wanted).values())
            touched = self.relational.clusters_of(u.id for u in units).get(namespace, set())
            deleted = self.relational.delete_units(namespace, [u.id for u in units])
            self.vectors.delete(namespace, deleted)
            self._forget_cached(namespace, units, self.relational.deletion_mark(namespace))
            for cluster_id in touched:  # centroids must not keep forgotten vectors' traces
                members = self.relational.cluster_members(namespace, cluster_id)
                vectors = list(self.embeddings(namespace, members).values())
                total = np.sum(vectors, axis=0) if vectors else None
                self.relational.reset_cluster(namespace, cluster_id, total, len(vectors))
            self._erase_copies(units)
            return deleted

    def forget_by_id(self, namespace: str, ids: Iterable[str]) -> list[str]:
        """Forget by the ids the surfaces print; returns the memory ids forgotten.

        An id is an added item's key (``add`` prints it, ``list`` shows it: the item and its
        memories go) or a memory's id (``ask`` and ``list`` show them).  Every id must name
        something: an unknown one is refused, naming it, before anything is forgotten.
        """
        wanted = list(dict.fromkeys(ids))
        with self._write_lock:
            items = {item.key: item for item in self.relational.items(namespace, wanted)}
            units = self.relational.units(namespace, [i for i in wanted if i not in items])
            unknown = [i for i in wanted if i not in items and i not in units]
            if unknown:
                raise NotFoundError(
                    f"no memory or item {', '.join(map(repr, unknown))} in {namespace!r} "
                    "(list shows the ids): nothing was forgotten"
                )
            forgotten = self.forget(namespace, memory_ids=list(units)) if units else []
            for key, item in items.items():
                forgotten += list(self.relational.units(namespace, item.unit_ids))
                self.delete_item(namespace, key)
            return forgotten

    def _erase_copies(self, units: Sequence[MemoryUnit]) -> None:
        """Remove the bytes a delete leaves, at the cost of what was deleted.

        Checkpointed threads quoting the units are purged and the relational log emptied now;
        what stays in the files' free space (SQLite's and Chroma's catalogs, the threads
        file, PostgreSQL's tables) and in a collection's index files is owed to the
        compaction that closes the erasure window (``compact``), scheduled here.
        """
        if not units:
            return
        threads = self.directory / CHECKPOINTS
        if purge_threads(threads, [u.id for u in units], [u.text for u in units]):
            self.relational.owe([THREADS_DEBT], time.time())
        if not self.relational.scrub():
            self.relational.owe([RELATIONAL_DEBT], time.time())
        self._schedule_compaction()

    # --- compaction: closing the erasure window ----------------------------------------------

    def debts(self) -> dict[str, float]:
        """What compactions owe, by part, with the time each debt began (oldest first)."""
        return self.relational.debts()

    def compact(self, *, demotions: int | None = DEMOTIONS) -> Compaction:
        """Remove every forgotten byte a forget left behind, and settle the debts.

        Collections owed a flush are saved by Chroma without their deleted vectors, Chroma's
        catalog and the threads file are vacuumed (embedded), the relational side's files are
        rewritten (SQLite's ``VACUUM``, PostgreSQL's ``VACUUM FULL``), and up to ``demotions``
        namespaces kept in collections they are too small for (every one with ``None``; a
        store of an earlier version holds many) move their vectors into rows.  Only parts a
        forget touched are rewritten; the relational side is rewritten whole, once per window
        with forgets, never per forget.
        """
        started = time.perf_counter()
        with self._write_lock:
            small = self.vectors.small_collections()
            moved = small if demotions is None else small[:demotions]
            for namespace in moved:
                self.vectors.demote(namespace)
                evict_namespace(self.directory, namespace)
            debts = self.relational.debts()
            self.vectors.compact(debts)
            if THREADS_DEBT in debts:
                vacuum(self.directory / CHECKPOINTS)
            settled = [part for part in debts if part != RELATIONAL_DEBT]
            if RELATIONAL_DEBT in debts and self.relational.compact():
                settled.append(RELATIONAL_DEBT)
            self.relational.settle(settled)
        self._schedule_compaction()
        return Compaction(sorted(settled), moved, time.perf_counter() - started)

    def compact_due(self) -> Compaction | None:
        """``compact`` if the oldest debt is as old as the erasure window, else nothing."""
        debts = self.relational.debts()
        if debts and min(debts.values()) + self.erasure_window <= time.time():
            return self.compact()
        return None

    def _schedule_compaction(self) -> None:
        """Have a daemon thread run ``compact_due`` when the oldest debt's window closes.

        One timer at a time: a later debt is younger, so the pending timer comes first.  A
        process that ends before the timer leaves its debts recorded; the next process to
        open the store schedules them.
        """
        with self._compaction_lock:
            if self._compaction is not None and self._compaction.is_alive():
                return
            debts = self.relational.debts()
            if not debts:
                return
            delay = max(0.0, min(debts.values()) + self.erasure_window - time.time())
            self._compaction = threading.Timer(delay, self._compact_in_background)
            self._compaction.daemon = True
            self._compaction.start()

    def _compact_in_background(self) -> None:
        with self._compaction_lock:
            self._compaction = None
        try:
            self.compact_due()
        except Exception:  # the store may have been closed, or a server be away: retry later
            _log.exception("compaction failed; it is tried again after the erasure window")
            with self._compaction_lock:
                self._compaction = threading.Timer(self.erasure_window, self._compact_in_background)
                self._compaction.daemon = True
                self._compaction.start()
            return
        self._schedule_compaction()

    def _forget_cached(
        self, namespace: str, units: Sequence[MemoryUnit], mark: tuple[int, int] | None = None
    ) -> None:
        """Drop the namespace's derived values, or shrink them by one deletion's ``mark``."""
        if mark is None:
            evict_namespace(self.directory, namespace)
        elif units:
            forgotten_in_namespace(self.directory, namespace, units, *mark)
        with self._vector_cache_lock:
            for unit in units:
                self._vector_cache.pop((unit.namespace, unit.id), None)
        self.embedder.forget([u.text for u in units])

    def files(self) -> list[Path]:
        """Every file on this machine holding this store: its directory's and its database's.

        What a forget must leave without a trace (the soak and the byte tests read them).
        """
        inside = sorted(path for path in self.directory.rglob("*") if path.is_file())
        held = set(inside)
        return inside + [path for path in self.relational.files() if path not in held]

    def check(self, *, repair: bool = False) -> CheckReport:
        """Cross-check the relational side and the vectors; with ``repair``, mend them.

        Holds the write lock, so an ingest in another process is never mistaken for damage.
        A unit whose vector is missing is re-embedded from its stored text on repair; vectors
        where their namespace's do not live (a move cut short) are deleted there.
        """
        with self._write_lock:
            report = CheckReport(problems=self.relational.dangling())
            report.problems["puts cut short"] = len(self.relational.unfinished_puts())
            known = self.relational.namespaces()
            in_rows = set(self.relational.vector_namespaces())
            in_chroma = set(self.vectors.chroma.namespaces())
            missing_vectors = orphan_vectors = misplaced_vectors = 0
            for namespace in known:
                units = self.relational.unit_ids(namespace)
                report.units += len(units)
                report.namespaces += bool(units)
                rows = self.relational.vector_ids(namespace) if namespace in in_rows else set()
                held = self.vectors.chroma.ids(namespace) if namespace in in_chroma else set()
                if self.vectors.placement(namespace) == "collection":
                    vectors, misplaced = held, rows
                else:
                    vectors, misplaced = rows, held
                lost, orphans = sorted(units - vectors), sorted(vectors - units)
                missing_vectors += len(lost)
                orphan_vectors += len(orphans)
                misplaced_vectors += len(misplaced)
                pending = self.relational.pending_links(namespace)
                if pending:
                    report.pending_links[namespace] = pending
                if repair:
                    self._repair_vectors(namespace, lost, orphans, misplaced)
            stray = sorted((in_rows | in_chroma) - set(known))
            report.problems["units without a vector"] = missing_vectors
            report.leftovers = {
                "vectors without a unit": orphan_vectors,
                "vectors where their namespace's do not live": misplaced_vectors,
                "vectors of unknown namespaces": len(stray),
            }
            if repair:
                for namespace in stray:
                    self.vectors.drop(namespace)
                self.relational.repair_references()
                self.vectors.place_unplaced()
                report.repaired = True
            return report

    def _repair_vectors(
        self, namespace: str, lost: list[str], orphans: list[str], misplaced: set[str]
    ) -> None:
        """Delete vectors without a unit or in the wrong place; re-embed missing ones."""
        if orphans:
            self.vectors.delete(namespace, orphans)
        if misplaced and self.vectors.placement(namespace) == "collection":
            self.relational.delete_vectors(namespace, misplaced)
        elif misplaced:
            self.vectors.chroma.drop(namespace)
        if lost:
            restored = list(self.relational.units(namespace, lost).values())
            self.vectors.upsert(
                namespace,
                [u.id for u in restored],
                self.embedder.documents([u.text for u in restored]),
            )

    # --- reads -----------------------------------------------------------------------------

    def get(self, namespace: str, ids: Iterable[str]) -> dict[str, MemoryUnit]:
        """Units by id (ids of other namespaces are not returned)."""
        return self.relational.units(namespace, ids)

    def all_units(self, namespace: str) -> list[MemoryUnit]:
        """Every unit in the namespace, in write order."""
        return self.relational.all_units(namespace)

    def count_units(self, namespace: str) -> int:
        """How many units the namespace holds."""
        return self.relational.count_units(namespace)

    def count_edges(self, namespace: str) -> dict[str, int]:
        """Undirected edges by type in the namespace."""
        return self.relational.count_edges(namespace)

    def vocabulary(self, namespace: str) -> tuple[list[str], list[str]]:
        """The namespace's known people and places (normalised), most frequent first."""
        return self._vocabulary(namespace).ranked()

    def latest_time(self, namespace: str) -> datetime | None:
        """The end of the namespace's latest memory time (the "now" of its questions)."""
        return self._vocabulary(namespace).latest

    def embeddings(self, namespace: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors of the namespace's units by id, from an in-process cache when seen.

        Ids hash their content, so a cached vector can only go stale by deletion, which
        drops it from the cache too; the cache is keyed by namespace, as every read is.
        """
        with self._vector_cache_lock:
            found = {}
            for mid in ids:
                cached = self._vector_cache.get((namespace, mid))
                if cached is not None:
                    self._vector_cache.move_to_end((namespace, mid))
                    found[mid] = cached
        missing = [mid for mid in ids if mid not in found]
        if missing:
            fetched = self.vectors.embeddings(namespace, missing)
            self._cache_vectors(namespace, fetched)
            found.update(fetched)
        return found

    def _cache_vectors(self, namespace: str, vectors: dict[str, np.ndarray]) -> None:
        with self._vector_cache_lock:
            self._vector_cache.update(((namespace, mid), v) for mid, v in vectors.items())
            while len(self._vector_cache) > _VECTOR_CACHE_LIMIT:
                self._vector_cache.popitem(last=False)

    def search_vectors(
        self, namespace: str, vectors: np.ndarray, k: int
    ) -> list[list[tuple[str, float]]]:
        """Nearest stored units for each vector, as (id, cosine); only committed units."""
        return self.vectors.query(namespace, vectors, k, rows=lambda: self._vector_rows(namespace))

    def _searched(
        self, namespace: str, parameters: tuple[Hashable, ...], search: Callable[[], list[S]]
    ) -> list[S]:
        """A channel search's result, repeated from memory while the namespace is unchanged.

        Recall recipes, a Studio re-run and a chat turn's tool call ask the same question of
        the same namespace state; each first-hop channel then costs one lookup.
        """
        return list(self.derived("searches", namespace, parameters, search))

    def clear_query_caches(self) -> None:
        """Forget cached query embeddings and searches (benchmarks time them too)."""
        self.embedder.clear_cache()
        self._cache("searches").clear(self.directory)

    def search_semantic(self, namespace: str, query: str, k: int) -> list[tuple[str, float]]:
        """Top ``k`` units by cosine similarity to the query text."""
        return self._searched(
            namespace,
            ("semantic", query, k),
            lambda: self.search_vectors(namespace, self.embedder.query(query)[None, :], k)[0],
        )

    def _cache(self, name: str) -> DerivedCache[Any]:
        with self._caches_lock:
            if name not in self._caches:
                self._caches[name] = (
                    DerivedCache(weigh=lambda rows: len(rows[0]), capacity=_ROWS_CACHED)
                    if name == _ROWS
                    else DerivedCache(limit=_ENTRIES)
                )
            return self._caches[name]

    def _vector_rows(self, namespace: str) -> tuple[list[str], np.ndarray]:
        """The namespace's vector rows as ids and a matrix, grown with its writes."""

        def of(units: list[MemoryUnit]) -> tuple[list[str], np.ndarray]:
            found = self.relational.vectors(namespace, [u.id for u in units])
            ids = [u.id for u in units if u.id in found]
            return ids, np.stack([found[mid] for mid in ids]) if ids else np.zeros((0, 0))

        def grown(
            rows: tuple[list[str], np.ndarray], units: list[MemoryUnit]
        ) -> tuple[list[str], np.ndarray]:
            ids, matrix = of(units)
            if not rows[0]:
                return ids, matrix
            return rows[0] + ids, np.vstack([rows[1], matrix]) if ids else rows[1]

        def without(
            rows: tuple[list[str], np.ndarray], units: Sequence[MemoryUnit]
        ) -> tuple[list[str], np.ndarray]:
            # The forgotten memories are found by C-speed scans and cut out in one copy: a
            # delete costs a few memory copies of the matrix, not a Python loop over it.
            gone = {u.id for u in units}.intersection(rows[0])
            if not gone:
                return rows
            positions = sorted(rows[0].index(mid) for mid in gone)
            ids = list(rows[0])
            for position in reversed(positions):
                del ids[position]
            return ids, np.delete(rows[1], positions, axis=0) if ids else np.zeros((0, 0))

        rows: tuple[list[str], np.ndarray] = self.follow(_ROWS, namespace, of, grown, without)
        return rows

    def follow(
        self,
        name: str,
        namespace: str,
        build: Callable[[list[MemoryUnit]], S],
        grow: Callable[[S, list[MemoryUnit]], S],
        shrink: Shrink[S] | None = None,
    ) -> S:
        """The value ``name`` of the namespace's units, grown with its writes.

        ``build`` makes it from every unit; ``grow`` adds the units written since, in write
        order; ``shrink`` removes what this store forgets (without one, a forget evicts the
        value and the next read rebuilds it, as after anyone else's deletion;
        ``DerivedCache.follow``).  The store holds these values, so the policies that define
        them stay pure functions.
        """
        value: S = self._cache(name).follow(
            self.directory,
            namespace,
            self.relational.generation(namespace),
            lambda seq: self.relational.units_since(namespace, seq),
            build,
            grow,
            shrink,
        )
        return value

    def derived(
        self, name: str, namespace: str, parameters: tuple[Hashable, ...], build: Callable[[], T]
    ) -> T:
        """The value ``name`` for these parameters, rebuilt after any change to the namespace."""
        value: T = self._cache(name).get(
            self.directory, namespace, self.relational.generation(namespace), parameters, build
        )
        return value

    def _vocabulary(self, namespace: str) -> Vocabulary:
        return self.follow(
            "vocabulary", namespace, Vocabulary.of, Vocabulary.extended, Vocabulary.without
        )

    def _lexical(self, namespace: str) -> Bm25:
        return self.follow("bm25", namespace, Bm25.of, Bm25.extended, Bm25.without)

    def search_lexical(self, namespace: str, query: str, k: int) -> list[tuple[str, float]]:
        """Top ``k`` units by BM25 score."""
        return self._searched(
            namespace, ("lexical", query, k), lambda: ranked(self._lexical(namespace), query, k)
        )

    def search_exact(self, namespace: str, query: str, k: int) -> list[tuple[str, float]]:
        """Up to ``k`` units alone holding an identifier of the query (``lexical.sole_holders``)."""
        return self._searched(
            namespace,
            ("exact", query, k),
            lambda: sole_holders(self._lexical(namespace), query, k),
        )

    def search_cues(
        self,
        namespace: str,
        people: Iterable[str] = (),
        places: Iterable[str] = (),
        interval: TimeInterval | None = None,
        *,
        k: int,
        exclude: str | None = None,
        window_days: float = 7.0,
        query: str | None = None,
    ) -> list[CueMatch]:
        """Units sharing the most person/place/time cues with the given ones.

        Many units tie on the shared count (in a two-person dialogue every turn names one of
        them), and the index alone breaks ties by time and write order.  With a ``query``, ties
        go to the units nearest the query instead, among up to ``CUE_CANDIDATES`` matches.
        """
        people, places = tuple(people), tuple(places)

        def closeness(ids: list[str]) -> np.ndarray:
            """Cosine of each unit to the query; -1 for a unit without a stored vector."""
            vectors = self.embeddings(namespace, ids)
            query_vector = self.embedder.query(query or "")
            stored = [mid in vectors for mid in ids]
            near = np.full(len(ids), -1.0)
            if any(stored):
                matrix = np.stack([vectors[mid] for mid in ids if mid in vectors])
                near[np.asarray(stored)] = matrix @ query_vector
            return near

        def search() -> list[CueMatch]:
            index = self.follow(
                "cue index", namespace, CueIndex.of, CueIndex.extended, CueIndex.without
            )
            return index.matches(
                people,
                places,
                interval,
                k=k,
                exclude=exclude,
                window_days=window_days,
                closeness=None if query is None else closeness,
                candidates=CUE_CANDIDATES,
            )

        parameters = ("cues", people, places, interval, k, exclude, window_days, query)
        return self._searched(namespace, parameters, search)

    def neighbours(
        self, namespace: str, ids: Iterable[str], edge_types: Iterable[str]
    ) -> list[Edge]:
        """Typed edges leaving ``ids``, strongest first."""
        return self.relational.neighbours(namespace, ids, edge_types)

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

    def sweep_expired(self) -> int:
        """Forget every item whose time to live ran out, down to the bytes; how many."""
        swept = 0
        for namespace, key in self.relational.expired_items(datetime.now(UTC)):
            swept += self.delete_item(namespace, key)
        return swept

    def item_keys(self, namespace: str, unit_ids: Iterable[str]) -> dict[str, str]:
        """The key of the put item each unit was made of (other units are absent)."""
        return self.relational.item_keys(namespace, unit_ids)

    def delete_item(self, namespace: str, key: str) -> bool:
        """Forget an item: its units from every channel, then its value, down to the bytes."""
        with self._write_lock:
            found = self.relational.items(namespace, [key])
            if not found:
                return False
            if found[0].unit_ids:
                self.forget(namespace, memory_ids=found[0].unit_ids)
            if self.relational.delete_item(namespace, key):  # no unit of it was left to forget
                self.relational.scrub()
            return True

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
        """(namespace, key, intent) of every put logged by ``begin_put`` and not saved since."""
        return self.relational.unfinished_puts()

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

    def close(self) -> None:
        """Release the database connection and stop the compaction timer (debts stay owed)."""
        with self._compaction_lock:
            if self._compaction is not None:
                self._compaction.cancel()
                self._compaction = None
        self.relational.close()


_embedders: dict[str, Embedder] = {}
_stores: dict[tuple[str, str, str | None, str | None], MemoryStore] = {}
_open_lock = threading.Lock()


@lru_cache(maxsize=256)
def _resolve(cwd: str, directory: str) -> str:
    """Resolved once per (working directory, path): graph nodes open the store at every step."""
    return str((Path(cwd) / Path(directory).expanduser()).resolve())


def open_store(
    directory: str | Path,
    embeddings: str | Embeddings = DEFAULT_EMBEDDING,
    chroma_url: str | None = None,
    database_url: str | None = None,
    *,
    collection_threshold: int = COLLECTION_THRESHOLD,
    erasure_window_minutes: float = ERASURE_WINDOW_MINUTES,
) -> MemoryStore:
    """Open (once per process) the store at ``directory`` with the given embeddings.

    ``database_url`` (``postgresql://…``) puts the relational side on that server instead of
    ``graph.sqlite`` in ``directory``; ``chroma_url`` does the same for the vectors.
    """
    path = _resolve(os.getcwd(), str(directory))
    with _open_lock:
        if isinstance(embeddings, str):
            if embeddings not in _embedders:
                _embedders[embeddings] = Embedder(load_embeddings(embeddings))
            embedder = _embedders[embeddings]
        else:
            embedder = Embedder(embeddings)
        key = (path, embedder.name, chroma_url, database_url)
        store = _stores.get(key)
        if store is None:
            store = _stores[key] = MemoryStore(
                Path(path),
                embedder,
                chroma_url,
                database_url,
                collection_threshold=collection_threshold,
                erasure_window_minutes=erasure_window_minutes,
            )
        return store
