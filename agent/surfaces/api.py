"""The library's entry points for whole operations: remember sessions, recall once, answer.

The CLI parses, calls these and renders; an embedding application calls them the same way.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig

from ripplegraph.agent.context import Deployed
from ripplegraph.agent.decisions.roles import reply
from ripplegraph.agent.graph import build_recall_graph, ingest_graph, recall_graph
from ripplegraph.agent.memory import Session
from ripplegraph.agent.services import Services
from ripplegraph.agent.state import IngestInput, IngestOutput, RecallInput, RecallOutput
from ripplegraph.agent.store.erasure import CHECKPOINTS
from ripplegraph.agent.surfaces.checkpointing import sqlite_saver

SESSIONS_PER_BATCH = 8
"""Sessions per ingest graph run: progress shows per batch, and a crash loses at most one."""


@dataclass(frozen=True)
class Remembered:
    """What an ingest did to a namespace."""

    namespace: str
    units: int  # units the namespace holds now
    new_units: int
    edges: dict[str, int]  # the namespace's undirected edges by type, now
    edges_added: dict[str, int]
    seconds: float


def remember(
    sessions: Sequence[Session],
    namespace: str,
    context: Deployed,
    advance: Callable[[int], None] = lambda turns: None,
) -> Remembered:
    """Run the ingest graph over ``sessions`` in batches; ``advance`` hears each batch's turns.

    On embedded Chroma the whole ingest holds the store's write lock: Chroma's embedded
    client is not safe against another process's writes interleaving with its own reads
    (seen as "Error finding id" with two concurrent ingests), so a second writer waits for
    the first to finish.  A Chroma server serialises requests itself; there batches interleave.
    """
    started = time.perf_counter()
    store = Services(context.deployment).store()
    new_units = 0
    added: dict[str, int] = {}
    exclusive = nullcontext() if context.deployment.chroma_url else store.write_lock()
    with exclusive:
        for start in range(0, len(sessions), SESSIONS_PER_BATCH):
            batch = list(sessions[start : start + SESSIONS_PER_BATCH])
            raw = ingest_graph.invoke(
                IngestInput(namespace=namespace, sessions=batch), context=context
            )
            result = IngestOutput.model_validate(raw)
            new_units += len(result.written_ids)
            for edge_type, count in result.edges_added.items():
                added[edge_type] = added.get(edge_type, 0) + count
            advance(sum(len(s.turns) for s in batch))
    return Remembered(
        namespace=namespace,
        units=store.count_units(namespace),
        new_units=new_units,
        edges=store.count_edges(namespace),
        edges_added=added,
        seconds=round(time.perf_counter() - started, 2),
    )


def recall(
    question: str, namespace: str, context: Deployed, graph: Any = recall_graph, thread: str = ""
) -> RecallOutput:
    """Run the recall graph once (on a thread when the graph has a checkpointer)."""
    config: RunnableConfig = {"configurable": {"thread_id": thread}} if thread else {}
    raw = graph.invoke(
        RecallInput(query=question, namespace=namespace), context=context, config=config
    )
    return RecallOutput.model_validate(raw)


def recall_state(question: str, namespace: str, context: Deployed) -> dict[str, Any]:
    """Run the recall graph once, unchecked; its whole final state, not only its output.

    The state holds what the output leaves out (the pool before assembly, the plan): the
    trace page renders it and the benchmark's miss report reads it.
    """
    final: dict[str, Any] = {}
    for values in recall_graph.stream(
        RecallInput(query=question, namespace=namespace), context=context, stream_mode="values"
    ):
        final = values
    return final


def answer(question: str, result: RecallOutput, context: Deployed) -> tuple[str, str | None]:
    """The answer and, when the answer role fell back, why (the chat graph's ``respond``).

    The answer role replies when a model is configured and the recall left budget for it;
    otherwise, or when it fails, the offline extractive answer.
    """
    allowance = result.budget.spent.left_of(context.llm_budget.limit)
    caller = Services(context.deployment).caller()
    text, _, usage = reply(caller, question, result.evidence, result.context, allowance)
    return text, (usage.note or "fell back") if usage.fallbacks else None


def forget_now(context: Deployed, namespace: str, **selection: Any) -> list[str]:
    """``MemoryStore.forget``, then the compaction: gone from every file when it returns.

    What a person asks to forget by hand (the CLI, the browser) does not wait for the
    erasure window; ``selection`` is ``forget``'s one selector, and ids are taken as
    ``forget_by_id`` takes them (an added item's key or a memory's id, each known).
    """
    memory = Services(context.deployment).store()
    ids = selection.pop("memory_ids", ())
    forgotten = (
        memory.forget_by_id(namespace, ids) if ids else memory.forget(namespace, **selection)
    )
    memory.compact(demotions=0)
    return forgotten


@contextmanager
def checkpointed_recall(store_dir: Path) -> Iterator[Any]:
    """The recall graph with a SQLite checkpointer (``checkpoints.sqlite`` in the store)."""
    with sqlite_saver(store_dir / CHECKPOINTS) as saver:
        yield build_recall_graph().compile(checkpointer=saver, name="recall")
