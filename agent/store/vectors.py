"""The vector channel: Chroma holds every memory's embedding and document.

One collection per namespace: a namespace's vectors are physically apart from everyone
else's, and a query needs no metadata filter (on LoCoMo, a ``where`` filter on one shared
collection cost 20 ms per top-10 query against 1.5 ms unfiltered).  Chroma is only ever given
embeddings we computed: a collection opened without an explicit ``embedding_function=None``
falls back to Chroma's default function, which downloads a model.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

COLLECTION_PREFIX = "rg_"
_MAX_BATCH = 4000  # below Chroma's max batch size on every backend


def _telemetry_off() -> Any:
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    from chromadb.config import Settings

    return Settings(anonymized_telemetry=False)


def collection_name(namespace: str) -> str:
    """Chroma collection of a namespace (Chroma names allow only ``[a-zA-Z0-9._-]``)."""
    return COLLECTION_PREFIX + hashlib.sha256(namespace.encode("utf-8")).hexdigest()[:32]


class VectorIndex:
    """Namespace-scoped vector search, one Chroma collection (cosine space) per namespace."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._collections: dict[str, Any] = {}
        self._lock = threading.Lock()

    def _collection(self, namespace: str) -> Any:
        with self._lock:
            collection = self._collections.get(namespace)
            if collection is None:
                collection = self._client.get_or_create_collection(
                    collection_name(namespace),
                    embedding_function=None,
                    configuration={"hnsw": {"space": "cosine"}},
                    metadata={"namespace": namespace},
                )
                self._collections[namespace] = collection
            return collection

    @classmethod
    def embedded(cls, directory: Path) -> VectorIndex:
        """An embedded ``PersistentClient`` at ``directory``."""
        import chromadb

        return cls(chromadb.PersistentClient(path=str(directory), settings=_telemetry_off()))

    @classmethod
    def remote(cls, url: str) -> VectorIndex:
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
            )
        )

    def upsert(
        self,
        namespace: str,
        ids: Sequence[str],
        embeddings: np.ndarray,
        documents: Sequence[str],
    ) -> None:
        """Write vectors and documents; writing an id again replaces it."""
        for start in range(0, len(ids), _MAX_BATCH):
            stop = start + _MAX_BATCH
            self._collection(namespace).upsert(
                ids=list(ids[start:stop]),
                embeddings=embeddings[start:stop],
                documents=list(documents[start:stop]),
            )

    def query(
        self, namespace: str, embeddings: np.ndarray, k: int
    ) -> list[list[tuple[str, float]]]:
        """For each query vector, the ``k`` nearest memories as (id, cosine similarity)."""
        if k <= 0 or len(embeddings) == 0:
            return [[] for _ in range(len(embeddings))]
        collection = self._collection(namespace)
        k = min(k, int(collection.count()))
        if k == 0:
            return [[] for _ in range(len(embeddings))]
        result = collection.query(query_embeddings=embeddings, n_results=k, include=["distances"])
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

    def drop(self, namespace: str) -> None:
        """Delete the namespace's collection."""
        with self._lock:
            self._collections.pop(namespace, None)
            try:
                self._client.delete_collection(collection_name(namespace))
            except Exception as error:  # Chroma raises different types for "does not exist"
                if "does not exist" not in str(error).lower():
                    raise

    def count(self, namespace: str) -> int:
        """Vectors stored for the namespace."""
        return int(self._collection(namespace).count())
