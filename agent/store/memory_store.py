"""``MemoryStore``: one facade over the vector, lexical, cue and edge channels of a store.

A store is a directory: ``graph.sqlite`` (units, cue indexes, edges, and the vectors of small
namespaces), Chroma's files for the collections of large ones (unless a Chroma server is
used) and a lock file that serialises writers across processes.  Every read and write names a
namespace.  What a forget leaves in files it cannot rewrite at its own cost is owed to a
compaction that runs within the store's erasure window.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from filelock import FileLock

from ripplegraph.agent.errors import NotFoundError, StoreError
from ripplegraph.agent.memory import MemoryUnit, TimeInterval
from ripplegraph.agent.models.providers import Embedder
from ripplegraph.agent.paths import STORE_MARK, owner_only
from ripplegraph.agent.store.backend import RelationalBackend
from ripplegraph.agent.store.cue_index import CueIndex, CueMatch
from ripplegraph.agent.store.derived import (
    DerivedCache,
    Shrink,
    evict_namespace,
    forgotten_in_namespace,
)
from ripplegraph.agent.store.dialogue import Dialogue
from ripplegraph.agent.store.edges import DIALOGUE, Edge
from ripplegraph.agent.store.ids import memory_id
from ripplegraph.agent.store.lexical import Bm25, ranked, sole_holders
from ripplegraph.agent.store.postgres import PostgresBackend
from ripplegraph.agent.store.records import Records
from ripplegraph.agent.store.sqlite import SQLiteBackend
from ripplegraph.agent.store.upkeep import Upkeep
from ripplegraph.agent.store.vector_layout import VectorLayout
from ripplegraph.agent.store.vectors import VectorIndex
from ripplegraph.agent.store.vocabulary import Vocabulary

_log = logging.getLogger(__name__)
_VECTOR_CACHE_LIMIT = 50_000  # ≈ 80 MB of MiniLM vectors, most recently used kept
_ROWS = "vector rows"
_ROWS_CACHED = 100_000
"""Vector rows kept as namespaces' search matrices (≈ 150 MB of MiniLM), by recent use."""
COLLECTION_THRESHOLD = 2000
"""Vectors a namespace keeps in rows; one more and it gets a Chroma collection of its own."""
ERASURE_WINDOW_MINUTES = 10.0
"""How long after a forget its compaction may wait (``compact`` closes the window at once)."""
S = TypeVar("S")
T = TypeVar("T")
_ENTRIES = 512  # values kept per derived cache: searches are keyed by free text

CUE_CANDIDATES = 1000  # cue matches re-ranked by the query; bounds the vectors read


class MemoryStore(Upkeep, Records):
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
        owner_only(self.directory, folder=True)
        self.embedder = embedder
        # Two processes creating the same store at once would race in SQLite and Chroma setup.
        with FileLock(str(owner_only(self.directory / STORE_MARK))):
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
                else VectorIndex.embedded_at(
                    owner_only(self.directory / "chroma", folder=True), self.store_id
                )
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

    def held_terms(self, namespace: str, terms: Iterable[str]) -> list[str]:
        """Those of ``terms`` (in ``MemoryUnit.terms``' form) some memory of the namespace holds."""
        return self._vocabulary(namespace).held(terms)

    def count_sessions(self, namespace: str) -> int:
        """How many sessions the namespace's memories come from."""
        return self._vocabulary(namespace).sessions

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
            return ids, np.array([found[mid] for mid in ids]) if ids else np.zeros((0, 0))

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
                # np.array copies equal rows in one pass; np.stack takes six times as long.
                matrix = np.array([vectors[mid] for mid in ids if mid in vectors])
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
        """Typed edges leaving ``ids``: the stored ones strongest first, then ``dialogue``'s."""
        wanted, types = list(ids), list(edge_types)
        stored = [t for t in types if t != DIALOGUE]
        edges = self.relational.neighbours(namespace, wanted, stored) if stored else []
        if DIALOGUE in types:
            dialogue = self.follow(
                "dialogue", namespace, Dialogue.of, Dialogue.extended, Dialogue.without
            )
            edges += [Edge(src, dst, DIALOGUE, 1.0) for src, dst in dialogue.beside(wanted)]
        return edges

    # --- forgetting items ----------------------------------------------------------------

    def sweep_expired(self) -> int:
        """Forget every item whose time to live ran out, down to the bytes; how many."""
        swept = 0
        for namespace, key in self.relational.expired_items(datetime.now(UTC)):
            swept += self.delete_item(namespace, key)
        return swept

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

    def close(self) -> None:
        """Release the database connection and stop the compaction timer (debts stay owed)."""
        with self._compaction_lock:
            if self._compaction is not None:
                self._compaction.cancel()
                self._compaction = None
        self.relational.close()
