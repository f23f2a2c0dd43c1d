"""Latency and scale: recall per node as the store grows, beside the raw retrieval floor.

Timings are steady state: each namespace is queried once, untimed, before it is measured.

The store grows by copying the LoCoMo conversations into new namespaces (vectors, cues and
edges copied, not recomputed); ingest throughput is measured on the real ingest of the
originals.  The floor is what any retriever pays for one query on the same namespace: embed
the question and take Chroma's top 10, or take BM25's top 10.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent.context import Deployed
from agent.eval.locomo import LocomoData
from agent.eval.metrics import percentiles
from agent.eval.systems import ingest_namespaces
from agent.graph import recall_graph
from agent.memory import Session
from agent.state import RecallInput


def truncate(data: LocomoData, size: int) -> LocomoData:
    """The first ``size`` turns of the conversations (whole sessions), and their questions."""
    sessions: dict[str, list[Session]] = {}
    total = 0
    for namespace, conversation in data.sessions.items():
        for session in conversation:
            if total >= size:
                break
            sessions.setdefault(namespace, []).append(session)
            total += len(session.turns)
    questions = [q for q in data.questions if q.namespace in sessions]
    return LocomoData(sessions=sessions, questions=questions)


def grow(context: Deployed, data: LocomoData, size: int) -> int:
    """Copy the conversations into new namespaces until the store holds ``size`` units.

    Returns how many copies of each conversation exist.
    """
    store = context.store()
    total = sum(store.count_units(ns) for ns in data.sessions)
    copies = 0
    while total < size:
        copies += 1
        for source in data.sessions:
            target = f"{source}/copy{copies}"
            if not store.count_units(target):
                store.clone_namespace(source, target)
            total += store.count_units(target)
    return copies


def time_recall(context: Deployed, data: LocomoData, copies: int, queries: int) -> dict[str, Any]:
    """Recall p50/p95 overall and per node, and the floor, over ``queries`` questions."""
    store = context.store()
    per_node: dict[str, list[float]] = {}
    totals: list[float] = []
    dense: list[float] = []
    lexical: list[float] = []
    questions = data.questions[:: max(1, len(data.questions) // queries)][:queries]
    warm: set[str] = set()
    for index, question in enumerate(questions):
        copy = index % (copies + 1)
        namespace = f"{question.namespace}/copy{copy}" if copy else question.namespace
        if namespace not in warm:
            # Steady state, not cold start: open the collection and build the per-namespace
            # caches (BM25, root units) once, untimed, for the floor and recall alike.
            warm.add(namespace)
            recall_graph.invoke(RecallInput(query="warm up", namespace=namespace), context=context)
        store.clear_query_caches()
        started = time.perf_counter()
        store.search_semantic(namespace, question.text, 10)
        dense.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        store.search_lexical(namespace, question.text, 10)
        lexical.append((time.perf_counter() - started) * 1000)
        store.clear_query_caches()
        started = previous = time.perf_counter()
        for update in recall_graph.stream(
            RecallInput(query=question.text, namespace=namespace),
            context=context,
            stream_mode="updates",
        ):
            now = time.perf_counter()
            for node in update:
                per_node.setdefault(node, []).append((now - previous) * 1000)
            previous = now
        totals.append((time.perf_counter() - started) * 1000)
    floor = percentiles(dense)["p50"] + percentiles(lexical)["p50"]
    recall = percentiles(totals)
    return {
        "recall_ms": recall,
        "per_node_ms": {node: percentiles(v) for node, v in per_node.items()},
        "floor_ms": {
            "chroma_top10_with_embedding": percentiles(dense),
            "bm25_top10": percentiles(lexical),
            "sum_p50": round(floor, 1),
        },
        "ratio_to_floor": round(recall["p50"] / floor, 2) if floor else None,
    }


def run_latency(
    context: Deployed,
    data: LocomoData,
    sizes: list[int],
    queries: int = 50,
    advance: Callable[[], None] = lambda: None,
) -> dict[str, Any]:
    """Ingest throughput once, then recall timings at each store size (ascending).

    Sizes below the dev set use a store of their own holding its first turns; larger sizes
    grow one store by copying conversations.
    """
    started = time.perf_counter()
    store = context.store()
    before = sum(store.count_units(ns) for ns in data.sessions)
    seconds = ingest_namespaces(data.sessions, context)
    written = sum(store.count_units(ns) for ns in data.sessions) - before
    results: dict[str, Any] = {
        "ingest": {
            "units": written,
            "seconds": round(seconds, 1),
            "units_per_second": round(written / seconds, 1) if written else None,
        },
        "sizes": {},
    }
    base = sum(store.count_units(ns) for ns in data.sessions)
    for size in sorted(sizes):
        if size < base:
            small = truncate(data, size)
            small_context = dataclasses.replace(
                context,
                deployment=context.deployment.move(
                    Path(context.deployment.store_dir) / f"first-{size}"
                ),
            )
            ingest_namespaces(small.sessions, small_context)
            units = sum(small_context.store().count_units(ns) for ns in small.sessions)
            timing = time_recall(small_context, small, 0, queries)
        else:
            copies = grow(context, data, size)
            units = base * (copies + 1)
            timing = time_recall(context, data, copies, queries)
        results["sizes"][str(size)] = {"units": units} | timing
        advance()
    results["seconds"] = round(time.perf_counter() - started, 1)
    return results
