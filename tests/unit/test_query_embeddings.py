"""The query-embedding cache: a question and its content-only form cost one model call."""

from __future__ import annotations

from langchain_core.embeddings import Embeddings

from ripplegraph.agent.models.providers import Embedder


class CountingEmbeddings(Embeddings):
    """Deterministic 3-d vectors; counts the model calls."""

    def __init__(self, queries_are_documents: bool) -> None:
        self.queries_are_documents = queries_are_documents
        self.calls: list[list[str]] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [[float(len(t)), 1.0, 0.0] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self.calls.append([text])
        return [float(len(text)), 1.0, 0.0]


def test_uncached_queries_embed_in_one_call_and_match_single_queries() -> None:
    model = CountingEmbeddings(queries_are_documents=True)
    embedder = Embedder(model)
    both = embedder.queries(["What books has Melanie read?", "What books has read?"])
    assert model.calls == [["What books has Melanie read?", "What books has read?"]]
    alone = Embedder(CountingEmbeddings(queries_are_documents=True))
    assert (alone.query("What books has read?") == both[1]).all()
    embedder.query("What books has read?")
    assert len(model.calls) == 1, "served from the cache"


def test_a_model_with_query_instructions_embeds_each_query_on_its_own() -> None:
    model = CountingEmbeddings(queries_are_documents=False)
    Embedder(model).queries(["a question", "question"])
    assert model.calls == [["a question"], ["question"]]
