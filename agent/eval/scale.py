"""Scale inside one memory: a long-lived user's namespace grown to N units, timed as used.

Every LoCoMo dev conversation is ingested into one namespace (session ids keep their
conversation prefix); that ingest is timed and split into embedding, storage and linking,
beside plain sentence-transformers encoding the same texts.  The namespace then grows by
copies of its own units under fresh ids (vectors, cues and edges copied, not recomputed),
and at each size, after one untimed pass over the questions (a long-lived process has built
its per-namespace values), it is timed: recall with cold query caches (the search memo and
query embeddings cleared before each question), then once more node by node (``NodeClock``:
what each node took, and what the graph's stepping took between them); the floor any
retriever pays (embed the question, Chroma's top 10, BM25's top 10); the chat loop's
write→recall (remember one new turn, then recall the next question); forgetting each of
those turns; the memory browser's first page and asks (``agent.eval.browsing``); and last,
each question recalled and replayed (``time_stepping``: the nodes' recorded outputs handed
back through the same wiring, so what is timed is LangGraph alone).
"""

from __future__ import annotations

import gc
import resource
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langgraph.runtime import Runtime
from typing_extensions import override

from ripplegraph.agent.context import Context, Deployed
from ripplegraph.agent.eval.browsing import time_browser
from ripplegraph.agent.eval.conversations import LocomoData, Question
from ripplegraph.agent.eval.metrics import percentiles
from ripplegraph.agent.graph import RECALL_NODES, build_recall_graph, ingest_graph, recall_graph
from ripplegraph.agent.memory import Session, Turn
from ripplegraph.agent.models.local_embeddings import reference_model
from ripplegraph.agent.services import Services
from ripplegraph.agent.state import IngestInput, IngestOutput, RecallInput, RecallState
from ripplegraph.agent.store import MemoryStore

NAMESPACE = "scale"
BROWSER_ASKS = 10
"""Questions the browser's ask page is timed on (the first of the recall's questions)."""


def resident_mb() -> float:
    """The process's resident memory now (Linux), else its peak."""
    status = Path("/proc/self/status")
    if status.is_file():
        for line in status.read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def peak_mb() -> float:
    """The process's peak resident memory so far (Linux and macOS report it in different units)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (2**20 if sys.platform == "darwin" else 1024), 1)


def timed_ingest(context: Deployed, sessions: Sequence[Session]) -> dict[str, Any]:
    """Ingest into the scale namespace, per node, with the embedding's share measured."""
    store = Services(context.deployment).store()
    embedded_before = store.embedder.document_seconds
    nodes: dict[str, float] = {}
    started = previous = time.perf_counter()
    for update in ingest_graph.stream(
        IngestInput(namespace=NAMESPACE, sessions=list(sessions)),
        context=context,
        stream_mode="updates",
    ):
        now = time.perf_counter()
        for node in update:
            nodes[node] = nodes.get(node, 0.0) + now - previous
        previous = now
    embedding = store.embedder.document_seconds - embedded_before
    seconds = time.perf_counter() - started
    units = store.count_units(NAMESPACE)
    return {
        "units": units,
        "seconds": round(seconds, 1),
        "units_per_s": round(units / seconds, 1),
        "embed_s": round(embedding, 3),
        "store_s": round(nodes.get("write_memories", 0.0) - embedding, 3),
        "link_s": round(nodes.get("link_memories", 0.0), 3),
        "other_s": round(
            sum(v for k, v in nodes.items() if k not in ("write_memories", "link_memories")), 3
        ),
        "embed_share": round(embedding / seconds, 3),
    }


def reference_rate(store: MemoryStore) -> float:
    """Units/s of plain sentence-transformers ``encode`` (default batch size) on the texts."""
    texts = [u.text for u in store.all_units(NAMESPACE)]
    model = reference_model(store.embedder.embeddings)
    started = time.perf_counter()
    model.encode(texts)
    return round(len(texts) / (time.perf_counter() - started), 1)


def grow(store: MemoryStore, base: Sequence[str], size: int) -> int:
    """Copy the base units into the namespace until it holds ``size``; returns the count."""
    while (count := store.count_units(NAMESPACE)) < size:
        store.replicate(NAMESPACE, base[: size - count], f"#at{count}")  # a fresh tag each time
    return count


def time_size(context: Deployed, questions: Sequence[Question], turns: int) -> dict[str, Any]:
    """Recall, floor and write→recall timings in the scale namespace as it is now."""
    store = Services(context.deployment).store()
    for question in questions:  # steady state: every per-namespace value built once, untimed
        recall_graph.invoke(RecallInput(query=question.text, namespace=NAMESPACE), context=context)
    totals: list[float] = []
    dense: list[float] = []
    lexical: list[float] = []
    per_node: dict[str, list[float]] = {}
    between: list[float] = []
    # Both recalls of each question count; the floor's searches run inside too.
    with GcClock() as collector:
        for question in questions:
            store.clear_query_caches()
            started = time.perf_counter()
            store.search_semantic(NAMESPACE, question.text, 10)
            dense.append(_ms(started))
            started = time.perf_counter()
            store.search_lexical(NAMESPACE, question.text, 10)
            lexical.append(_ms(started))
            asked = RecallInput(query=question.text, namespace=NAMESPACE)
            store.clear_query_caches()
            started = time.perf_counter()
            recall_graph.invoke(asked, context=context)
            totals.append(_ms(started))
            store.clear_query_caches()  # again, timed node by node (the clock's own cost included)
            clock = NodeClock()
            started = time.perf_counter()
            recall_graph.invoke(asked, context=context, config={"callbacks": [clock]})
            whole = _ms(started)
            for node, spent in clock.spent.items():
                per_node.setdefault(node, []).append(spent)
            between.append(whole - sum(clock.spent.values()))
    writes, after, forgets = write_then_recall(context, questions, turns)
    browser = time_browser(context, NAMESPACE, [q.text for q in questions[:BROWSER_ASKS]])
    stepping = time_stepping(context, questions)  # last: its extra recalls move the collector
    floor = percentiles(dense)["p50"] + percentiles(lexical)["p50"]
    recall = percentiles(totals)
    return {
        "units": store.count_units(NAMESPACE),
        "recall_p50_ms": recall["p50"],
        "recall_p95_ms": recall["p95"],
        "recall_mean_ms": round(sum(totals) / len(totals), 1) if totals else 0.0,
        "floor_p50_ms": round(floor, 1),
        "write_then_recall_p50_ms": percentiles(after)["p50"],
        "write_p50_ms": percentiles(writes)["p50"],
        "forget_ms": percentiles(forgets),
        "rss_mb": resident_mb(),
        "ratio_to_floor": round(recall["p50"] / floor, 2) if floor else None,
        "floor_ms": {
            "chroma_top10_with_embedding": percentiles(dense),
            "bm25_top10": percentiles(lexical),
        },
        "per_node_p50_ms": {node: percentiles(v)["p50"] for node, v in per_node.items()},
        "between_nodes_p50_ms": percentiles(between)["p50"],
        "stepping": stepping,
        "garbage_collection": collector.summary(2 * len(questions)),
        "browser": browser,
    }


class NodeClock(BaseCallbackHandler):
    """Milliseconds each node of one graph run took, by node; a node run more than once adds up.

    A node's run is what LangGraph runs as the graph's child: the node's function, its writes
    and its router.  What the run took beyond its nodes is LangGraph's own stepping (planning
    each step, applying the writes and reducers, its checkpoints) and this clock's callbacks.
    """

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}
        self._graph: UUID | None = None
        self._started: dict[UUID, tuple[str, float]] = {}

    @override
    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: dict[str, Any] | Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        if parent_run_id is None:
            self._graph = run_id
        elif parent_run_id == self._graph:
            self._started[run_id] = (str(kwargs.get("name")), time.perf_counter())

    @override
    def on_chain_end(self, outputs: dict[str, Any] | Any, *, run_id: UUID, **kwargs: Any) -> None:
        begun = self._started.pop(run_id, None)
        if begun is not None:
            node, started = begun
            self.spent[node] = self.spent.get(node, 0.0) + _ms(started)


class Tape:
    """Each node's outputs, recorded as the real nodes run and handed back in the same order.

    Replaying a recall's outputs through the recall graph's own wiring runs LangGraph's work
    alone (planning each step, the writes, the reducers, the routers), with no node work.
    """

    def __init__(self) -> None:
        self.outputs: dict[str, deque[dict[str, Any]]] = {name: deque() for name in RECALL_NODES}
        self.calls = 0

    def recording(self, name: str) -> Callable[[RecallState, Runtime[Context]], dict[str, Any]]:
        """The node ``name`` as it runs, its output kept."""
        node = RECALL_NODES[name]

        def run(state: RecallState, runtime: Runtime[Context]) -> dict[str, Any]:
            output = node(state, runtime)
            self.outputs[name].append(output)
            return output

        return run

    def playing(self, name: str) -> Callable[[RecallState], dict[str, Any]]:
        """The node ``name`` answering with its next recorded output."""

        def play(state: RecallState) -> dict[str, Any]:
            self.calls += 1
            return self.outputs[name].popleft()

        return play


def time_stepping(context: Deployed, questions: Sequence[Question]) -> dict[str, Any]:
    """LangGraph's own time in a recall: each question's recorded node outputs replayed.

    Each question is recalled by the real nodes, its outputs recorded, then at once replayed
    through the same wiring with functions that only hand them back, so the same steps run
    in the same order and the replay's time is the graph's stepping, measured against plain
    calls of the same nodes.  It runs after the other timings of a size: its extra recalls
    bring the collector's next full collection forward, into whatever is timed next (the
    browser's first page at 100k took twice as long after it).
    """
    tape = Tape()
    recorder = build_recall_graph({name: tape.recording(name) for name in RECALL_NODES})
    player = build_recall_graph({name: tape.playing(name) for name in RECALL_NODES})
    recording, playing = recorder.compile(name="recall"), player.compile(name="recall")
    replayed = []
    for question in questions:
        asked = RecallInput(query=question.text, namespace=NAMESPACE)
        recording.invoke(asked, context=context)
        started = time.perf_counter()
        playing.invoke(asked, context=context)
        replayed.append(_ms(started))
        if any(tape.outputs.values()):
            raise RuntimeError("the replay took other steps than the recall it replayed")
    steps = tape.calls / max(len(questions), 1)
    p50 = percentiles(replayed)["p50"]
    return {
        "replayed_p50_ms": p50,
        "steps_per_recall": round(steps, 1),
        "ms_per_step": round(p50 / steps, 3) if steps else None,
    }


class GcClock:
    """Collections CPython's garbage collector ran while entered, and their pauses, by generation.

    A recall makes and drops thousands of small objects, so young collections run inside
    it; a collection of the oldest generation walks every tracked object of the process,
    the store's parsed units first among them, so its pause grows with what is stored
    even though it runs rarely.  A median hides both; this clock shows them.
    """

    def __init__(self) -> None:
        self.collections = [0, 0, 0]
        self.seconds = [0.0, 0.0, 0.0]
        self.longest = 0.0
        self._started = 0.0

    def __enter__(self) -> GcClock:
        gc.callbacks.append(self._observe)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        gc.callbacks.remove(self._observe)

    def _observe(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        spent = time.perf_counter() - self._started
        generation = info["generation"]
        self.collections[generation] += 1
        self.seconds[generation] += spent
        self.longest = max(self.longest, spent)

    def summary(self, recalls: int) -> dict[str, Any]:
        """Per recall: the young generations' time, the oldest's collections and time."""
        each = max(recalls, 1)
        return {
            "recalls": recalls,
            "young_ms_per_recall": round((self.seconds[0] + self.seconds[1]) * 1000 / each, 2),
            "oldest_collections": self.collections[2],
            "oldest_ms_per_recall": round(self.seconds[2] * 1000 / each, 2),
            "longest_pause_ms": round(self.longest * 1000, 1),
            "tracked_objects": len(gc.get_objects()),
        }


def write_then_recall(
    context: Deployed, questions: Sequence[Question], turns: int
) -> tuple[list[float], list[float], list[float]]:
    """The chat loop: remember one new user turn, then recall; then forget each turn.

    Returns the milliseconds of each write, each recall after it, and each forget.
    """
    store = Services(context.deployment).store()
    writes: list[float] = []
    after: list[float] = []
    written: list[list[str]] = []
    stamp = datetime(2030, 1, 1) + timedelta(seconds=store.count_units(NAMESPACE))
    for index in range(turns):
        question = questions[index % len(questions)]
        said = f"Turn {stamp:%H%M%S}-{index}: I keep thinking about {question.text.lower()}"
        session = Session(
            id=f"chat/{stamp:%Y%m%d%H%M%S}/{index}",
            date=stamp,
            turns=[Turn(speaker="User", text=said, id=f"t{index}")],
        )
        started = time.perf_counter()
        raw = ingest_graph.invoke(
            IngestInput(namespace=NAMESPACE, sessions=[session]), context=context
        )
        writes.append(_ms(started))
        written.append(IngestOutput.model_validate(raw).written_ids)
        store.clear_query_caches()
        started = time.perf_counter()
        recall_graph.invoke(RecallInput(query=question.text, namespace=NAMESPACE), context=context)
        after.append(_ms(started))
    forgets = []
    for ids in written:
        started = time.perf_counter()
        store.forget(NAMESPACE, memory_ids=ids)
        forgets.append(_ms(started))
    return writes, after, forgets


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def run_scale(
    context: Deployed,
    data: LocomoData,
    sizes: list[int],
    queries: int = 50,
    turns: int = 30,
    advance: Callable[[], None] = lambda: None,
) -> dict[str, Any]:
    """Ingest once, then grow the one namespace through ``sizes`` (ascending) and time it."""
    started = time.perf_counter()
    store = Services(context.deployment).store()
    store.drop_namespace(NAMESPACE)  # a database that ran the bench before starts empty again
    sessions = [s for conversation in data.sessions.values() for s in conversation]
    ingest = timed_ingest(context, sessions)
    ingest["reference_embed_units_per_s"] = reference_rate(store)
    base = [u.id for u in store.all_units(NAMESPACE)]
    questions = data.questions[:: max(1, len(data.questions) // queries)][:queries]
    results: dict[str, Any] = {"ingest": ingest, "sizes": {}}
    for size in sorted(sizes):
        grow(store, base, size)
        results["sizes"][str(size)] = time_size(context, questions, turns)
        advance()
    rss = [(s["units"], s["rss_mb"]) for s in results["sizes"].values()]
    if len(rss) > 1:
        (small, small_mb), (large, large_mb) = rss[0], rss[-1]
        results["rss_mb_per_10k_units"] = round((large_mb - small_mb) / (large - small) * 10_000, 1)
        per_memory = (large_mb - small_mb) * 2**20 / (large - small)
        vector = next(iter(store.embeddings(NAMESPACE, base[:1]).values()))
        results["bytes_per_memory"] = round(per_memory)
        results["vector_bytes"] = int(vector.nbytes)
        results["bytes_per_memory_beyond_vector"] = round(per_memory - vector.nbytes)
    results["seconds"] = round(time.perf_counter() - started, 1)
    return results
