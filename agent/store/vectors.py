"""The vector channel: Chroma holds every memory's embedding, and only that.

The text lives in ``graph.sqlite`` alone: a second copy in Chroma (a document column and its
full-text index) would be one more place a forgotten memory's words could outlive it.

One collection per namespace: a namespace's vectors are physically apart from everyone
else's, and a query needs no metadata filter (on LoCoMo, a ``where`` filter on one shared
collection cost 20 ms per top-10 query against 1.5 ms unfiltered).  Chroma is only ever given
embeddings we computed: a collection opened without an explicit ``embedding_function=None``
falls back to Chroma's default function, which downloads a model.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import struct
import threading
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np
from tenacity import retry, retry_if_exception, stop_after_attempt, wait_exponential

from ripplegraph.agent.store.erasure import vacuum, zero_tail

COLLECTION_PREFIX = "rg_"
_MAX_BATCH = 4000  # below Chroma's max batch size on every backend
# HNSW's candidate list per query.  At Chroma's default of 100, the top 30 missed a true
# neighbour for 20 of 760 LoCoMo dev questions, and not the same ones from one process to the
# next; at 400 every top 30 was exact.  A namespace is small enough that this costs little.
EF_SEARCH = 400
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


def _telemetry_off() -> Any:
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    from chromadb.config import Settings

    return Settings(anonymized_telemetry=False)


def collection_name(store_id: str, namespace: str) -> str:
    """Chroma collection of one store's namespace (names allow only ``[a-zA-Z0-9._-]``).

    The store id is part of the name because several stores may share one Chroma server.
    """
    digest = hashlib.sha256(f"{store_id}\x00{namespace}".encode()).hexdigest()[:32]
    return COLLECTION_PREFIX + digest


class VectorIndex:
    """Namespace-scoped vector search, one Chroma collection (cosine space) per namespace."""

    def __init__(self, client: Any, store_id: str, directory: Path | None = None) -> None:
        self._client = client
        self._store_id = store_id
        self._directory = directory  # embedded only: where Chroma keeps its files
        self._collections: dict[str, Any] = {}
        self._lock = threading.Lock()

    def _collection(self, namespace: str) -> Any:
        with self._lock:
            collection = self._collections.get(namespace)
            if collection is None:
                collection = self._open(namespace)
                self._collections[namespace] = collection
                self._scrub(namespace)
            return collection

    @_retry_busy_catalog
    def _open(self, namespace: str) -> Any:
        collection = self._client.get_or_create_collection(
            collection_name(self._store_id, namespace),
            embedding_function=None,
            configuration={"hnsw": {"space": "cosine", "ef_search": EF_SEARCH}},
            metadata={"namespace": namespace, "store": self._store_id},
        )
        hnsw = (collection.configuration_json or {}).get("hnsw") or {}
        if hnsw.get("ef_search", EF_SEARCH) < EF_SEARCH:  # made by an older version
            collection.modify(configuration={"hnsw": {"ef_search": EF_SEARCH}})
        return collection

    @classmethod
    def embedded(cls, directory: Path, store_id: str) -> VectorIndex:
        """An embedded ``PersistentClient`` at ``directory``."""
        import chromadb

        client = chromadb.PersistentClient(path=str(directory), settings=_telemetry_off())
        return cls(client, store_id, directory)

    @classmethod
    def remote(cls, url: str, store_id: str) -> VectorIndex:
        """A Chroma server reached over HTTP (``chroma run``)."""
        import chromadb

        parsed = urlparse(url)
        if not parsed.hostname:
            raise ValueError(f"not a Chroma server URL: {url!r} (expected http://host:port)")
        return cls(
            chromadb.HttpClient(
                host=parsed.hostname,
                port=parsed.port or (443 if parsed.scheme == "https" else 8000),
                ssl=parsed.scheme == "https",
                settings=_telemetry_off(),
            ),
            store_id,
        )

    def upsert(
        self,
        namespace: str,
        ids: Sequence[str],
        embeddings: np.ndarray,
    ) -> None:
        """Write vectors; writing an id again replaces it."""
        for start in range(0, len(ids), _MAX_BATCH):
            stop = start + _MAX_BATCH
            _retry_busy_catalog(self._collection(namespace).upsert)(
                ids=list(ids[start:stop]),
                embeddings=embeddings[start:stop],
            )
        self._scrub(namespace)

    def query(
        self, namespace: str, embeddings: np.ndarray, k: int
    ) -> list[list[tuple[str, float]]]:
        """For each query vector, the ``k`` nearest memories as (id, cosine similarity)."""
        if k <= 0 or len(embeddings) == 0:
            return [[] for _ in range(len(embeddings))]
        # Chroma 1.x returns what it has when k exceeds the count (a count() call cost more
        # than the query itself).
        result = self._collection(namespace).query(
            query_embeddings=embeddings, n_results=k, include=["distances"]
        )
        distances = result["distances"] or []
        return [
            [(mid, 1.0 - float(d)) for mid, d in zip(ids, dists, strict=True)]
            for ids, dists in zip(result["ids"], distances, strict=True)
        ]

    def embeddings(self, namespace: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors by id (missing ids are absent)."""
        if not ids:
            return {}
        result = self._collection(namespace).get(ids=list(ids), include=["embeddings"])
        vectors = result["embeddings"]
        return {
            mid: np.asarray(vec, dtype=np.float32)
            for mid, vec in zip(result["ids"], vectors, strict=True)
        }

    def delete(self, namespace: str, ids: Sequence[str]) -> None:
        """Delete vectors by id (ids not stored are ignored)."""
        for start in range(0, len(ids), _MAX_BATCH):
            batch = list(ids[start : start + _MAX_BATCH])
            _retry_busy_catalog(self._collection(namespace).delete)(ids=batch)

    def ids(self, namespace: str) -> set[str]:
        """Every id stored for the namespace."""
        collection = self._collection(namespace)
        found: set[str] = set()
        total = int(collection.count())
        for offset in range(0, total, _MAX_BATCH):
            found.update(collection.get(include=[], limit=_MAX_BATCH, offset=offset)["ids"])
        return found

    def namespaces(self) -> list[str]:
        """Namespaces that have a collection of this store (on a server, only this store's)."""
        found = []
        for collection in self._client.list_collections():
            metadata = collection.metadata or {}
            if metadata.get("store") == self._store_id and "namespace" in metadata:
                found.append(str(metadata["namespace"]))
        return sorted(found)

    def drop(self, namespace: str) -> None:
        """Delete the namespace's collection, and (embedded) its index folder on disk.

        Chroma forgets a dropped collection but leaves its HNSW folder — every vector — in
        place; the folder is found through the collection's vector segment and removed.
        """
        with self._lock:
            self._collections.pop(namespace, None)
            folders = self._segment_folders(namespace)
            try:
                _retry_busy_catalog(self._client.delete_collection)(
                    collection_name(self._store_id, namespace)
                )
            except Exception as error:  # Chroma raises different types for "does not exist"
                if "does not exist" not in str(error).lower():
                    raise
            for folder in folders:
                shutil.rmtree(folder, ignore_errors=True)

    def _scrub(self, namespace: str) -> None:
        """Zero what an embedded collection's HNSW files hold beyond their live elements.

        Chroma's hnswlib writes its element buffers at full capacity, unused slots included,
        from memory it never cleared (chroma-core/chroma#7688): a new collection's files can
        hold whatever the process had freed — another namespace's text, a forgotten memory.
        The header says how many elements are live; every byte after them is zeroed.
        """
        for folder in self._segment_folders(namespace):
            header = folder / "header.bin"
            if not header.is_file():
                continue
            *_, count, per_element, _, _ = struct.unpack_from(_HNSW_HEADER, header.read_bytes())
            zero_tail(folder / "data_level0.bin", count * per_element)
            zero_tail(folder / "length.bin", count * 4)

    def _segment_folders(self, namespace: str) -> list[Path]:
        """The embedded collection's vector segment folders (none on a server)."""
        catalog = self._directory / "chroma.sqlite3" if self._directory else None
        if catalog is None or not catalog.is_file():
            return []
        try:
            collection = self._client.get_collection(
                collection_name(self._store_id, namespace), embedding_function=None
            )
        except Exception:  # no such collection: nothing on disk either
            return []
        with closing(sqlite3.connect(f"file:{catalog}?mode=ro", uri=True)) as db:
            rows = db.execute(
                "SELECT id FROM segments WHERE collection = ? AND scope = 'VECTOR'",
                (str(collection.id),),
            ).fetchall()
        return [catalog.parent / str(row[0]) for row in rows]

    def rewrite(self, namespace: str) -> None:
        """Rebuild a collection from its live vectors (after a forget), on either backend.

        Chroma only marks a deleted vector: its bytes stay in the HNSW files and in the
        collection's log until they are overwritten.  A fresh collection holding the remaining
        vectors is the one way to leave none of the forgotten ones in a live collection.  A
        crash midway leaves units without a vector, which ``check`` reports and ``repair``
        re-embeds.  What a server keeps of the dropped collection is its operator's.
        """
        ids = sorted(self.ids(namespace))
        vectors = self.embeddings(namespace, ids)
        self.drop(namespace)
        if ids:
            self.upsert(namespace, ids, np.stack([vectors[i] for i in ids]))

    def compact(self) -> None:
        """Drop deleted rows' bytes from Chroma's own SQLite file (embedded; after a forget).

        A Chroma server's files are its operator's: ``chroma utils vacuum`` does it there.
        """
        if self._directory is not None:
            vacuum(self._directory / "chroma.sqlite3")

    def count(self, namespace: str) -> int:
        """Vectors stored for the namespace."""
        return int(self._collection(namespace).count())
