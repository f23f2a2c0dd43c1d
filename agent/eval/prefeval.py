"""PrefEval preference recall: is the turn that states the preference among the top K.

For each record, a namespace holds the preference turns (explicit: the statement as a user
turn; implicit: the conversation) followed by N filler turns from
``filtered_inter_turns.json``; the record's question is the query.  Gold turn: explicit — the
statement; choice-based — the user's ``user_selection``; persona-driven — the user turn most
similar to the record's ``preference`` (a silver label fixed once with the local embedder,
the same for every system).

A namespace per record is the semantics, not the storage.  The filler is embedded and linked
once per N into a template namespace; each record is ingested into the templates, scored by
every system, then forgotten.  Forgetting removes its units, cues, vectors and edges, and
linking may have displaced a few filler–filler edges (degrees are bounded), so those are put
back and the template is checked against its snapshot before the next record: every record
meets exactly the filler state a fresh namespace would give it.  Records are sharded over
worker processes, each with its own store, so the whole dev run fits the machine's cores.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from ripplegraph.agent.context import Deployed
from ripplegraph.agent.decisions.policies.extraction import restate
from ripplegraph.agent.eval.metrics import hit_at, mean
from ripplegraph.agent.eval.scale import peak_mb
from ripplegraph.agent.eval.systems import System, make_systems
from ripplegraph.agent.graph import ingest_graph
from ripplegraph.agent.memory import Session, Turn
from ripplegraph.agent.services import Services
from ripplegraph.agent.state import IngestInput
from ripplegraph.agent.store import LINK_TYPES, Edge

FORMS = ("explicit", "choice-based", "persona-driven")
PREFERENCE_DATE = datetime(2024, 1, 1, 12, 0)
FILLER_DATE = datetime(2024, 1, 2, 12, 0)
HIT_KS = (5, 10)
CHUNK = 8  # records per worker task: fine-grained progress, little overhead


@dataclass(frozen=True)
class PrefRecord:
    """One PrefEval record as a preference session, a question and the gold turn id.

    ``gold`` is None for persona-driven records: their silver label is computed where the
    record is scored (``gold_turn``), so the embedding work is spread over the workers.
    """

    form: str
    topic: str
    index: int
    question: str
    preference: str
    session: Session
    gold: str | None


def _turn(speaker: str, text: str, turn_id: str) -> Turn:
    return Turn(speaker=speaker, text=text, id=turn_id)


def _preference_session(form: str, record: dict[str, Any]) -> tuple[list[Turn], str | None]:
    if form == "explicit":
        return [_turn("User", record["preference"], "pref:1")], "pref:1"
    conversation = record["conversation"]
    if form == "choice-based":
        turns = [
            _turn("User", conversation["query"], "pref:1"),
            _turn("Assistant", conversation["assistant_options"], "pref:2"),
            _turn("User", conversation["user_selection"], "pref:3"),
            _turn("Assistant", conversation["assistant_acknowledgment"], "pref:4"),
        ]
        return turns, "pref:3"
    turns = []
    for key in sorted(conversation, key=lambda k: int(k)):
        pair = conversation[key]
        turns.append(_turn("User", pair["user"], f"pref:{len(turns) + 1}"))
        turns.append(_turn("Assistant", pair["assistant"], f"pref:{len(turns) + 1}"))
    return turns, None


def load_records(directory: Path, limit: int | None = None) -> list[PrefRecord]:
    """Every record of the three forms (the first ``limit`` of each)."""
    folders = {
        "explicit": directory / "explicit_preference",
        "choice-based": directory / "implicit_preference" / "choice-based",
        "persona-driven": directory / "implicit_preference" / "persona-driven",
    }
    records: list[PrefRecord] = []
    for form, folder in folders.items():
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder}: not a PrefEval benchmark_dataset folder")
        raw = [
            (path.stem, index, record)
            for path in sorted(folder.glob("*.json"))
            for index, record in enumerate(json.loads(path.read_text(encoding="utf-8")))
        ]
        for topic, index, record in raw[:limit] if limit is not None else raw:
            turns, gold = _preference_session(form, record)
            session = Session(id="pref", date=PREFERENCE_DATE, turns=turns)
            records.append(
                PrefRecord(
                    form, topic, index, record["question"], record["preference"], session, gold
                )
            )
    return records


def gold_turn(record: PrefRecord, embed: Callable[[list[str]], np.ndarray]) -> str:
    """The record's gold turn id; persona-driven: the user turn nearest its preference.

    Turns are embedded as the offline extraction remembers them ("User: words"), so the
    label's vectors are the ones every system's store holds, and the store's embedding cache
    makes the record's ingest reuse them instead of embedding the user turns twice.
    """
    if record.gold is not None:
        return record.gold
    users = [t for t in record.session.turns if t.speaker == "User"]
    vectors = embed([record.preference, *[restate(t) for t in users]])
    return str(users[int(np.argmax(vectors[1:] @ vectors[0]))].id)


def filler_turns(directory: Path, count: int) -> list[Turn]:
    """The first ``count`` filler turns, in file order."""
    conversations = json.loads((directory / "filtered_inter_turns.json").read_text("utf-8"))
    turns: list[Turn] = []
    for conversation in conversations:
        for message in conversation["conversation"]:
            if len(turns) == count:
                return turns
            speaker = "User" if message["role"] == "user" else "Assistant"
            turns.append(_turn(speaker, message["content"], f"filler:{len(turns) + 1}"))
    return turns


Scores = list[tuple[str, str, dict[str, float]]]  # (system, "form/N=n", {"Hit@k": 0 or 1})


@dataclass(frozen=True)
class _Template:
    """A filler namespace and its snapshot: the state every record must find."""

    count: int
    namespace: str
    ids: frozenset[str]
    edges: frozenset[Edge]


class RecordScorer:
    """Scores records against filler templates in one store, restoring them after each."""

    def __init__(
        self, directory: Path, context: Deployed, systems: Sequence[str], fillers: Sequence[int]
    ) -> None:
        self.context = context
        self.store = Services(context.deployment).store()
        self.systems = make_systems(self.store, context, tuple(systems))
        self.templates = [self._template(directory, count) for count in fillers]

    def _template(self, directory: Path, count: int) -> _Template:
        namespace = f"prefeval-filler-{count}"
        if not self.store.count_units(namespace):
            filler = Session(id="filler", date=FILLER_DATE, turns=filler_turns(directory, count))
            ingest_graph.invoke(
                IngestInput(namespace=namespace, sessions=[filler]), context=self.context
            )
        ids = frozenset(self.store.unit_ids(namespace))
        return _Template(count, namespace, ids, frozenset(self.store.edges(namespace)))

    def score(self, record: PrefRecord) -> Scores:
        """Hit@K of every system for the record at every filler count."""
        gold = gold_turn(record, self.store.embedder.documents)
        scores: Scores = []
        try:
            for template in self.templates:
                ingest_graph.invoke(
                    IngestInput(namespace=template.namespace, sessions=[record.session]),
                    context=self.context,
                )
                bucket = f"{record.form}/N={template.count}"
                for system in self.systems:
                    turns = self._turns(system, template.namespace, record.question)
                    hits = {f"Hit@{k}": hit_at(turns, gold, k) for k in HIT_KS}
                    scores.append((system.name, bucket, hits))
        finally:  # the record's session is forgotten only now, so it is embedded once
            for template in self.templates:
                self._restore(template, record.session.id)
        return scores

    def _turns(self, system: System, namespace: str, question: str) -> list[str]:
        ids = system.retrieve(namespace, question, max(HIT_KS))
        units = self.store.get(namespace, ids)
        return list(
            dict.fromkeys(t for mid in ids if mid in units for t in units[mid].provenance.turn_ids)
        )

    def _restore(self, template: _Template, session: str) -> None:
        store = self.store
        store.forget(template.namespace, session=session)
        edges = store.edges(template.namespace)
        if lost := template.edges - edges:  # displaced filler edges; both directions stored
            for edge_type in LINK_TYPES:
                additions = [
                    (e.src, e.dst, e.weight) for e in lost if e.type == edge_type and e.src < e.dst
                ]
                store.replace_edges(template.namespace, edge_type, (), additions)
            edges = store.edges(template.namespace)
        ids = store.unit_ids(template.namespace)
        if ids != template.ids or edges != template.edges:
            raise RuntimeError(
                f"{template.namespace}: the filler template drifted from its snapshot"
            )


_worker: RecordScorer | None = None


def _start_worker(
    slots: multiprocessing.Queue[int],
    directory: Path,
    context: Deployed,
    systems: Sequence[str],
    fillers: Sequence[int],
    threads: int,
) -> None:
    global _worker
    try:
        import torch

        torch.set_num_threads(threads)
    except ImportError:
        pass
    store_dir = Path(context.deployment.store_dir) / "prefeval-workers" / str(slots.get())
    worker_context = context.model_copy(update={"deployment": context.deployment.move(store_dir)})
    _worker = RecordScorer(directory, worker_context, systems, fillers)


def _score_chunk(records: list[PrefRecord]) -> tuple[list[Scores], float]:
    """The chunk's scores, and the worker's peak resident memory so far (MB)."""
    if _worker is None:
        raise RuntimeError("the PrefEval worker was not started")
    return [_worker.score(record) for record in records], peak_mb()


def _scores(
    directory: Path,
    context: Deployed,
    systems: Sequence[str],
    fillers: Sequence[int],
    records: list[PrefRecord],
    workers: int,
    peaks: list[float],
) -> Iterator[Scores]:
    """Each record's scores, from this process or from ``workers`` processes.

    ``peaks`` collects the peak resident memory each worker reported (MB).
    """
    if workers <= 1:
        scorer = RecordScorer(directory, context, systems, fillers)
        yield from (scorer.score(record) for record in records)
        peaks.append(peak_mb())
        return
    spawn = multiprocessing.get_context("spawn")
    slots: multiprocessing.Queue[int] = spawn.Queue()
    for slot in range(workers):
        slots.put(slot)
    threads = max(1, (os.cpu_count() or 1) // workers)
    with ProcessPoolExecutor(
        workers,
        mp_context=spawn,
        initializer=_start_worker,
        initargs=(slots, directory, context, systems, fillers, threads),
    ) as pool:
        chunks = [records[i : i + CHUNK] for i in range(0, len(records), CHUNK)]
        for done in as_completed([pool.submit(_score_chunk, chunk) for chunk in chunks]):
            scores, peak = done.result()
            peaks.append(peak)
            yield from scores


def run_prefeval(
    directory: Path,
    context: Deployed,
    systems: tuple[str, ...],
    records: list[PrefRecord],
    fillers: tuple[int, ...] = (10, 100, 300),
    advance: Callable[[], None] = lambda: None,
    workers: int = 1,
) -> dict[str, Any]:
    """Hit@5 and Hit@10 by form and filler count for each system (``advance`` per record)."""
    hits: dict[str, dict[str, dict[str, list[float]]]] = {s: {} for s in systems}
    peaks: list[float] = []
    for scores in _scores(directory, context, systems, fillers, records, workers, peaks):
        for system, bucket, values in scores:
            for metric, value in values.items():
                hits[system].setdefault(bucket, {}).setdefault(metric, []).append(value)
        advance()
    buckets = [f"{form}/N={count}" for count in fillers for form in FORMS]
    return {
        "systems": {
            name: {
                bucket: {metric: mean(values) for metric, values in scores[bucket].items()}
                for bucket in buckets
                if bucket in scores
            }
            for name, scores in hits.items()
        },
        "data": {
            "records": {form: sum(r.form == form for r in records) for form in FORMS},
            "fillers": list(fillers),
            "workers": workers,
        },
        "peak_rss_mb_per_worker": max(peaks, default=0.0),
    }
