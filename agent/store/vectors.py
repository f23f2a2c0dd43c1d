"""The Chroma side of the vector channel: a collection for each namespace that has one.

A namespace gets a collection of its own once it is large (``agent.store.vector_layout``);
until then its vectors are rows beside its units.  Chroma holds embeddings and ids only: the
text lives in the relational store alone, so no second copy of a memory's words can outlive
it.  Chroma is only ever given embeddings we computed: a collection opened without an explicit
``embedding_function=None`` falls back to Chroma's default function, which downloads a model.

What a long-running process must know of Chroma 1.x, and what this module does about it:

- Every index Chroma loads stays in a pool, dropped collections' included, up to the open-file
  limit / 5 indexes (4,000 here): each dropped collection left about 3 MB resident and four
  open files.  The pool cannot safely be made smaller (``_persistent_client``), so the store
  drops a collection only rarely: never on a forget, only when a namespace's collection is
  rebuilt (after more deletes than it holds vectors), moved back to rows, or forgotten whole.
- A deleted vector stays in the index's files (and its id in Chroma's catalog) until Chroma
  persists the index, which it does every ``sync_threshold`` records it applies.  A forget
  therefore overwrites each vector with a constant before deleting it, and a compaction
  ``flush``-es the collection (re-writing live records until Chroma persists) and vacuums the
  catalog: no rebuild of the collection, whose cost was that of the whole namespace.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import sqlite3
import struct
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar
from urllib.parse import urlparse

import numpy as np
from tenacity import retry, retry_if_exception, stop_after_attempt, wait_exponential

from ripplegraph.agent.errors import PartUnavailable, StoreError
from ripplegraph.agent.store.erasure import vacuum, zero_tail

COLLECTION_PREFIX = "rg_"
_MAX_BATCH = 4000  # below Chroma's max batch size on every backend
# HNSW's candidate list per query.  At Chroma's default of 100, the top 30 missed a true
# neighbour for 20 of 760 LoCoMo dev questions, and not the same ones from one process to the
# next; at 400 every top 30 was exact.  A namespace is small enough that this costs little.
EF_SEARCH = 400
SYNC_THRESHOLD = 100
"""Records Chroma applies between two saves of an index: what a ``flush`` re-writes."""
HANDLES = 256
"""Collection handles kept open, most recently used first."""
_DEFAULT_SYNC_THRESHOLD = 1000  # Chroma's, for collections made before SYNC_THRESHOLD
# hnswlib's header.bin: version, level-0 offset, capacity, live elements, bytes per element,
# label offset, data offset.
_HNSW_HEADER = "=iQQQQQQ"


def _catalog_busy(error: BaseException) -> bool:
    return "database is locked" in str(error)


_retry_busy_catalog = retry(
    retry=retry_if_exception(_catalog_busy),
    stop=stop_after_attempt(6),
    wait=wait_exponential(multiplier=0.05, max=1.0),
    reraise=True,
)
"""Retry a call that Chroma's embedded catalog refused as "database is locked".

Embedded Chroma's own connections contend for its SQLite catalog: a ``modify`` right after
``get_or_create_collection`` of an existing collection fails that way in about 3 of 100 tries,
with nothing else touching the files.  The refused statement changed nothing, so it is retried.
"""


def _settings(**extra: Any) -> Any:
    from chromadb.config import Settings

    return Settings(anonymized_telemetry=False, **extra)


def _persistent_client(directory: Path) -> Any:
    """An embedded client at ``directory``, Chroma's pool of loaded indexes as it sizes it.

    That pool must not be made smaller: an index evicted from it and loaded again comes back
    from its last save without the records applied since, and Chroma does not replay them
    (a query then misses the newest vectors, or fails with "Nothing found on disk").
    """
    import chromadb

    return chromadb.PersistentClient(path=str(directory), settings=_settings())


def collection_name(store_id: str, namespace: str) -> str:
    """Chroma collection of one store's namespace (names allow only ``[a-zA-Z0-9._-]``).

    The store id is part of the name because several stores may share one Chroma server.
    """
    digest = hashlib.sha256(f"{store_id}\x00{namespace}".encode()).hexdigest()[:32]
    return COLLECTION_PREFIX + digest


_SEARCH_AND_SAVE = {"ef_search": EF_SEARCH, "sync_threshold": SYNC_THRESHOLD}


def _updated(collection: Any) -> Any:
    """The collection, with the search width and save interval of this version.

    A collection an older version made searches a narrower candidate list and saves its
    index only every 1,000 records (what a flush must write); both are changed in place.
    """
    hnsw = (collection.configuration_json or {}).get("hnsw") or {}
    if (
        hnsw.get("ef_search", EF_SEARCH) < EF_SEARCH
        or hnsw.get("sync_threshold", SYNC_THRESHOLD) > SYNC_THRESHOLD
    ):
        collection.modify(configuration={"hnsw": _SEARCH_AND_SAVE})
    return collection


P = ParamSpec("P")
R = TypeVar("R")


def _unreachable(error: BaseException) -> bool:
    """Whether an error says the Chroma server could not be reached (or went away)."""
    import httpx

    return isinstance(error, httpx.TransportError) or (
        isinstance(error, ValueError) and "could not connect" in str(error).lower()
    )


def _reaching(
    method: Callable[Concatenate[VectorIndex, P], R],
) -> Callable[Concatenate[VectorIndex, P], R]:
    """A server that cannot be reached, as the store's one-line ``PartUnavailable``.

    Embedded Chroma failing inside (its files changed under it by another process, the
    limit the servers page documents) is a ``StoreError`` that says so, not a traceback.

    The HTTP client dials again at its next request, so the same index works again once the
    server is back.
    """

    @functools.wraps(method)
    def call(self: VectorIndex, /, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except PartUnavailable:
            raise
        except Exception as error:
            if self._url is not None and _unreachable(error):
                raise PartUnavailable(f"the Chroma server at {self._url}", error) from error
            if self._directory is not None and type(error).__name__ == "InternalError":
                raise StoreError(
                    f"embedded Chroma could not read its files in {self._directory} "
                    f"({' '.join(str(error).split())[:160]}): they are one process's, and "
                    "another process may have written them since this one opened them; use "
                    "one process, or keep the vectors on a Chroma server (--chroma-url) for "
                    "several"
                ) from error
            raise

    return call


def _missing(error: Exception) -> bool:
    """Chroma's several ways of saying a collection does not exist."""
    text = str(error).lower()
    return "does not exist" in text or "not found" in text


class VectorIndex:
    """Namespace-scoped vector search, one Chroma collection (cosine space) per namespace."""

    def __init__(
        self,
        connect: Callable[[], Any],
        store_id: str,
        directory: Path | None = None,
        url: str | None = None,
    ) -> None:
        os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")  # before Chroma reads it
        self._connect = connect
        self._connected: Any = None
        self._store_id = store_id
        self._directory = directory  # embedded only: where Chroma keeps its files
        self._url = url  # a server's address, for the error that says it is away
        self._collections: OrderedDict[str, Any] = OrderedDict()
        self._scrubbed: OrderedDict[Path, tuple[int, int]] = OrderedDict()
        self._width: int | None = None  # the vectors' dimension, once one was written
        self._lock = threading.RLock()

    @property
    def _client(self) -> Any:
        """The Chroma client, made at its first use.

        A store whose namespaces all keep their vectors in rows never starts Chroma.
        """
        with self._lock:
            if self._connected is None:
                self._connected = self._connect()
            return self._connected

    @property
    def embedded(self) -> bool:
        """Whether Chroma's files are this process's to read (an embedded client)."""
        return self._directory is not None

    @classmethod
    def embedded_at(cls, directory: Path, store_id: str) -> VectorIndex:
        """An embedded client at ``directory``."""
        return cls(lambda: _persistent_client(directory), store_id, directory)

    @classmethod
    def remote(cls, url: str, store_id: str) -> VectorIndex:
        """A Chroma server reached over HTTP (``chroma run``)."""
        import chromadb

        parsed = urlparse(url)
        if not parsed.hostname:
            raise ValueError(f"not a Chroma server URL: {url!r} (expected http://host:port)")
        return cls(
            lambda: chromadb.HttpClient(
                host=parsed.hostname,
                port=parsed.port or (443 if parsed.scheme == "https" else 8000),
                ssl=parsed.scheme == "https",
                settings=_settings(),
            ),
            store_id,
            url=url,
        )

    # --- collections ---------------------------------------------------------------------------

    def _unstarted(self) -> bool:
        """An embedded Chroma that never held anything: no file to open, no client to make."""
        return (
            self._connected is None
            and self._directory is not None
            and not (self._directory / "chroma.sqlite3").is_file()
        )

    def _collection(self, namespace: str, *, create: bool = True) -> Any:
        """The namespace's collection (made if ``create``, else ``None`` when it has none)."""
        if not create and self._unstarted():
            return None
        with self._lock:
            collection = self._collections.get(namespace)
            if collection is not None:
                self._collections.move_to_end(namespace)
                return collection
            collection = self._open(namespace) if create else self._existing(namespace)
            if collection is None:
                return None
            self._collections[namespace] = collection
            while len(self._collections) > HANDLES:
                self._collections.popitem(last=False)
        self._scrub(namespace)
        return collection

    @_retry_busy_catalog
    def _open(self, namespace: str) -> Any:
        collection = self._client.get_or_create_collection(
            collection_name(self._store_id, namespace),
            embedding_function=None,
            configuration={"hnsw": {"space": "cosine", **_SEARCH_AND_SAVE}},
            metadata={"namespace": namespace, "store": self._store_id},
        )
        return _updated(collection)

    @_retry_busy_catalog
    def _existing(self, namespace: str) -> Any:
        try:
            collection = self._client.get_collection(
                collection_name(self._store_id, namespace), embedding_function=None
            )
        except Exception as error:
            if _missing(error):
                return None
            raise
        return _updated(collection)

    def _forget_handle(self, namespace: str) -> None:
        with self._lock:
            self._collections.pop(namespace, None)

    @_reaching
    def exists(self, namespace: str) -> bool:
        """Whether the namespace has a collection (one made by an earlier version, say)."""
        return self._collection(namespace, create=False) is not None

    # --- vectors -------------------------------------------------------------------------------

    @_reaching
    def upsert(self, namespace: str, ids: Sequence[str], embeddings: np.ndarray) -> None:
        """Write vectors; writing an id again replaces it."""
        collection = self._collection(namespace)
        for start in range(0, len(ids), _MAX_BATCH):
            stop = start + _MAX_BATCH
            _retry_busy_catalog(collection.upsert)(
                ids=list(ids[start:stop]), embeddings=embeddings[start:stop]
            )
        if len(ids):
            self._width = int(np.shape(embeddings)[1])
        self._scrub(namespace)

    @_reaching
    def query(
        self, namespace: str, embeddings: np.ndarray, k: int
    ) -> list[list[tuple[str, float]]]:
        """For each query vector, the ``k`` nearest memories as (id, cosine similarity)."""
        collection = self._collection(namespace, create=False)
        if k <= 0 or len(embeddings) == 0 or collection is None:
            return [[] for _ in range(len(embeddings))]
        # Chroma 1.x returns what it has when k exceeds the count (a count() call cost more
        # than the query itself).
        result = collection.query(query_embeddings=embeddings, n_results=k, include=["distances"])
        distances = result["distances"] or []
        return [
            [(mid, 1.0 - float(d)) for mid, d in zip(ids, dists, strict=True)]
            for ids, dists in zip(result["ids"], distances, strict=True)
        ]

    @_reaching
    def embeddings(self, namespace: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors by id (missing ids are absent)."""
        collection = self._collection(namespace, create=False)
        if not ids or collection is None:
            return {}
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(ids), _MAX_BATCH):
            result = collection.get(
                ids=list(ids[start : start + _MAX_BATCH]), include=["embeddings"]
            )
            found.update(
                (mid, np.asarray(vec, dtype=np.float32))
                for mid, vec in zip(result["ids"], result["embeddings"], strict=True)
            )
        return found

    @_reaching
    def delete(self, namespace: str, ids: Sequence[str]) -> None:
        """Delete vectors by id (ids not stored are ignored), overwritten first.

        Chroma only marks a deleted element: the vector stays in the loaded index, and in its
        files, until that slot is reused.  Overwriting it with a constant first leaves none of
        it there; the next save of the index (``flush``) writes the constant to the files.
        """
        collection = self._collection(namespace, create=False)
        if collection is None:
            return
        for start in range(0, len(ids), _MAX_BATCH):
            batch = list(ids[start : start + _MAX_BATCH])
            present = collection.get(ids=batch, include=[])["ids"]
            width = self._width or self._stored_width(collection)
            if present and width:
                constant = np.zeros((len(present), width), dtype=np.float32)
                constant[:, 0] = 1.0
                _retry_busy_catalog(collection.upsert)(ids=present, embeddings=constant)
            _retry_busy_catalog(collection.delete)(ids=batch)

    def _stored_width(self, collection: Any) -> int | None:
        """The dimension of the collection's vectors (none when it holds none)."""
        sample = collection.get(limit=1, include=["embeddings"])
        if not sample["ids"]:
            return None
        self._width = len(sample["embeddings"][0])
        return self._width

    @_reaching
    def ids(self, namespace: str) -> set[str]:
        """Every id stored for the namespace."""
        collection = self._collection(namespace, create=False)
        if collection is None:
            return set()
        found: set[str] = set()
        total = int(collection.count())
        for offset in range(0, total, _MAX_BATCH):
            found.update(collection.get(include=[], limit=_MAX_BATCH, offset=offset)["ids"])
        return found

    @_reaching
    def count(self, namespace: str) -> int:
        """Vectors stored for the namespace."""
        collection = self._collection(namespace, create=False)
        return 0 if collection is None else int(collection.count())

    @_reaching
    def namespaces(self) -> list[str]:
        """Namespaces that have a collection of this store (on a server, only this store's)."""
        if self._unstarted():
            return []
        found = []
        for collection in self._client.list_collections():
            metadata = collection.metadata or {}
            if metadata.get("store") == self._store_id and "namespace" in metadata:
                found.append(str(metadata["namespace"]))
        return sorted(found)

    @_reaching
    def drop(self, namespace: str) -> None:
        """Delete the namespace's collection, and (embedded) its index folder on disk.

        Chroma forgets a dropped collection but leaves its HNSW folder — every vector — in
        place; the folder is found through the collection's vector segment and removed.
        """
        self._forget_handle(namespace)
        folders = self._segment_folders(namespace)
        try:
            _retry_busy_catalog(self._client.delete_collection)(
                collection_name(self._store_id, namespace)
            )
        except Exception as error:  # Chroma raises different types for "does not exist"
            if not _missing(error):
                raise
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)

    # --- what a forget leaves, and the compaction that removes it -----------------------------

    @_reaching
    def flush(self, namespace: str) -> None:
        """Have Chroma save the collection's index now, so its files hold no deleted vector.

        Chroma saves an index once it has applied ``sync_threshold`` records since the last
        save; writing live records again (same ids, same vectors) counts as much.  An empty
        collection is dropped instead.  Embedded, a save shows as a new ``header.bin``; a
        collection that still shows none (a threshold changed while its index was loaded) is
        rebuilt from its live vectors.  A server saves as it does; its files are its
        operator's.
        """
        collection = self._collection(namespace, create=False)
        if collection is None:
            return
        hnsw = (collection.configuration_json or {}).get("hnsw") or {}
        threshold = int(hnsw.get("sync_threshold") or _DEFAULT_SYNC_THRESHOLD)
        live = collection.get(include=["embeddings"], limit=threshold)
        if not live["ids"]:
            self.drop(namespace)
            return
        ids, vectors = live["ids"], np.asarray(live["embeddings"], dtype=np.float32)
        before = self._headers(namespace)
        written = 0
        while written < 2 * max(threshold, _DEFAULT_SYNC_THRESHOLD):
            _retry_busy_catalog(collection.upsert)(ids=ids, embeddings=vectors)
            written += len(ids)
            if self._directory is None and written >= threshold:
                return
            if self._directory is not None and self._headers(namespace) != before:
                self._scrub(namespace)
                return
        self.rebuild(namespace)

    @_reaching
    def rebuild(self, namespace: str) -> None:
        """A fresh collection holding the live vectors, and none of the deleted elements.

        The dropped collection's index stays in Chroma's pool of loaded indexes.
        """
        ids = sorted(self.ids(namespace))
        vectors = self.embeddings(namespace, ids)
        self.drop(namespace)
        if ids:
            self.upsert(namespace, ids, np.stack([vectors[i] for i in ids]))

    @_reaching
    def compact(self) -> None:
        """Drop deleted rows' bytes from Chroma's own SQLite file (embedded; after a flush).

        A Chroma server's files are its operator's: ``chroma vacuum`` does it there.
        """
        if self._directory is not None:
            vacuum(self._directory / "chroma.sqlite3")

    def _headers(self, namespace: str) -> dict[Path, tuple[int, int]]:
        """Size and modification time of each index header (changed by every save)."""
        found = {}
        for folder in self._segment_folders(namespace):
            header = folder / "header.bin"
            if header.is_file():
                stat = header.stat()
                found[folder] = (stat.st_size, stat.st_mtime_ns)
        return found

    def _scrub(self, namespace: str) -> None:
        """Zero what an embedded collection's HNSW files hold beyond their live elements.

        Chroma's hnswlib writes its element buffers at full capacity, unused slots included,
        from memory it never cleared (chroma-core/chroma#7688): a new collection's files can
        hold whatever the process had freed — another namespace's text, a forgotten memory.
        The header says how many elements are live; every byte after them is zeroed, once
        per save of the index (a header not seen yet).
        """
        for folder, seen in self._headers(namespace).items():
            if self._scrubbed.get(folder) == seen:
                continue
            *_, count, per_element, _, _ = struct.unpack_from(
                _HNSW_HEADER, (folder / "header.bin").read_bytes()
            )
            zero_tail(folder / "data_level0.bin", count * per_element)
            zero_tail(folder / "length.bin", count * 4)
            with self._lock:
                self._scrubbed[folder] = seen
                while len(self._scrubbed) > HANDLES:
                    self._scrubbed.popitem(last=False)

    def _segment_folders(self, namespace: str) -> list[Path]:
        """The embedded collection's vector segment folders (none on a server)."""
        catalog = self._directory / "chroma.sqlite3" if self._directory else None
        if catalog is None or not catalog.is_file():
            return []
        collection = self._collections.get(namespace) or self._existing(namespace)
        if collection is None:
            return []
        with closing(sqlite3.connect(f"file:{catalog}?mode=ro", uri=True)) as db:
            rows = db.execute(
                "SELECT id FROM segments WHERE collection = ? AND scope = 'VECTOR'",
                (str(collection.id),),
            ).fetchall()
        return [catalog.parent / str(row[0]) for row in rows]
