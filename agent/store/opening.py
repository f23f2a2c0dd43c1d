"""Opening a store: one ``MemoryStore`` per directory, embeddings and servers in a process."""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from pathlib import Path

from langchain_core.embeddings import Embeddings

from ripplegraph.agent.models.providers import DEFAULT_EMBEDDING, Embedder, load_embeddings
from ripplegraph.agent.store.memory_store import (
    COLLECTION_THRESHOLD,
    ERASURE_WINDOW_MINUTES,
    MemoryStore,
)

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
