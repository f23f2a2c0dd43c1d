"""The systems a benchmark compares, each returning a ranked list of memory ids.

Baselines are what a user would otherwise pick: BM25, dense cosine, and their reciprocal-rank
fusion.  The RippleGraph systems run the real recall graph under a named recipe.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from ripplegraph.agent.context import Deployed
from ripplegraph.agent.eval.names import GRAPH_SYSTEMS, SYSTEMS
from ripplegraph.agent.graph import ingest_graph, recall_graph
from ripplegraph.agent.memory import MemoryUnit, Session
from ripplegraph.agent.recall_config import RecipeName
from ripplegraph.agent.state import IngestInput, RecallInput, RecallOutput
from ripplegraph.agent.store import MemoryStore

RRF_K = 60
BASELINE_DEPTH = 100


@dataclass(frozen=True)
class System:
    """A named retriever: (namespace, question, k) → ranked memory ids."""

    name: str
    retrieve: Callable[[str, str, int], list[str]]


@dataclass(frozen=True)
class Retrieved:
    """One timed retrieval: the memories in rank order and the turn ids they came from."""

    units: list[MemoryUnit]
    turns: list[str]  # provenance turn ids in rank order, each once
    milliseconds: float


def retrieve(
    store: MemoryStore, system: System, namespace: str, question: str, depth: int
) -> Retrieved:
    """Ask ``system`` with cold query caches, and map its ranking onto dialogue turns.

    Units map to turns through their provenance, so LLM-extracted units spanning several
    turns are measured like one-turn units.
    """
    store.clear_query_caches()
    started = time.perf_counter()
    ids = system.retrieve(namespace, question, depth)
    milliseconds = (time.perf_counter() - started) * 1000
    found = store.get(namespace, ids)
    units = [found[mid] for mid in ids if mid in found]
    turns = list(dict.fromkeys(t for u in units for t in u.provenance.turn_ids))
    return Retrieved(units, turns, milliseconds)


Q = TypeVar("Q", bound="Asked")


class Asked(Protocol):
    """A benchmark question: it is asked of one namespace."""

    @property
    def namespace(self) -> str:
        """The namespace the question is asked of."""
        ...


def first_questions(
    questions: list[Q], sessions: dict[str, list[Session]], limit: int | None
) -> tuple[list[Q], dict[str, list[Session]]]:
    """The first ``limit`` questions and only the namespaces they ask (all when no limit)."""
    if limit is None:
        return questions, sessions
    kept = questions[:limit]
    used = {q.namespace for q in kept}
    return kept, {ns: s for ns, s in sessions.items() if ns in used}


def ingest_namespaces(sessions: Mapping[str, Sequence[Session]], context: Deployed) -> float:
    """Write each namespace's sessions (a no-op when already stored); seconds taken."""
    started = time.perf_counter()
    for namespace, batch in sessions.items():
        ingest_graph.invoke(IngestInput(namespace=namespace, sessions=list(batch)), context=context)
    return time.perf_counter() - started


def reciprocal_rank_fusion(*rankings: list[str], k: int = RRF_K) -> list[str]:
    """Fuse rankings by Σ 1/(k + rank); ties broken by first appearance."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, mid in enumerate(ranking, start=1):
            scores[mid] = scores.get(mid, 0.0) + 1.0 / (k + rank)
    order = {mid: i for i, mid in enumerate(dict.fromkeys(m for r in rankings for m in r))}
    return sorted(scores, key=lambda mid: (-scores[mid], order[mid]))


def recipe_context(context: Deployed, recipe: RecipeName, k: int) -> Deployed:
    """The bench's run context for one recipe: K memories, no token budget to cut them."""
    limits = context.recall.model_copy(update={"evidence_k": k, "context_tokens": 100_000})
    return context.model_copy(update={"recall_recipe": recipe, "recall": limits})


def make_systems(store: MemoryStore, context: Deployed, names: tuple[str, ...]) -> list[System]:
    """The requested systems over one store."""

    def bm25(namespace: str, question: str, k: int) -> list[str]:
        return [mid for mid, _ in store.search_lexical(namespace, question, k)]

    def dense(namespace: str, question: str, k: int) -> list[str]:
        return [mid for mid, _ in store.search_semantic(namespace, question, k)]

    def hybrid(namespace: str, question: str, k: int) -> list[str]:
        depth = max(k, BASELINE_DEPTH)
        fused = reciprocal_rank_fusion(
            bm25(namespace, question, depth), dense(namespace, question, depth)
        )
        return fused[:k]

    def graph(recipe: RecipeName) -> Callable[[str, str, int], list[str]]:
        def run(namespace: str, question: str, k: int) -> list[str]:
            raw = recall_graph.invoke(
                RecallInput(query=question, namespace=namespace),
                context=recipe_context(context, recipe, k),
            )
            return [e.memory.id for e in RecallOutput.model_validate(raw).evidence]

        return run

    builtin: dict[str, Callable[[str, str, int], list[str]]] = {
        "bm25": bm25,
        "dense": dense,
        "hybrid": hybrid,
    }
    for name, recipe in GRAPH_SYSTEMS.items():
        builtin[name] = graph(recipe)
    unknown = [n for n in names if n not in builtin]
    if unknown:
        raise ValueError(f"unknown systems {unknown}; choose from {', '.join(SYSTEMS)}")
    return [System(name, builtin[name]) for name in names]
