"""PrefEval preference recall: is the turn that states the preference among the top K.

For each record, a namespace holds the preference turns (explicit: the statement as a user
turn; implicit: the conversation) followed by N filler turns from
``filtered_inter_turns.json``; the record's question is the query.  Gold turn: explicit — the
statement; choice-based — the user's ``user_selection``; persona-driven — the user turn most
similar to the record's ``preference`` (a silver label fixed once with the local embedder,
the same for every system).  The filler is embedded and linked once per N in a template
namespace and copied into each record's namespace, which is dropped after scoring.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from agent.context import Context
from agent.eval.metrics import hit_at, mean
from agent.eval.systems import make_systems
from agent.graph import ingest_graph
from agent.memory import Session, Turn
from agent.state import IngestInput

FORMS = ("explicit", "choice-based", "persona-driven")
PREFERENCE_DATE = datetime(2024, 1, 1, 12, 0)
FILLER_DATE = datetime(2024, 1, 2, 12, 0)
HIT_KS = (5, 10)


@dataclass
class PrefRecord:
    """One PrefEval record as a preference session, a question and the gold turn id."""

    form: str
    topic: str
    index: int
    question: str
    session: Session
    gold: str


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


def load_records(
    directory: Path, embed: Callable[[list[str]], np.ndarray], limit: int | None = None
) -> list[PrefRecord]:
    """Every record of the three forms; persona-driven gold turns labelled by ``embed``."""
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
            if gold is None:
                users = [t for t in turns if t.speaker == "User"]
                vectors = embed([record["preference"], *[t.text for t in users]])
                gold = str(users[int(np.argmax(vectors[1:] @ vectors[0]))].id)
            session = Session(id="pref", date=PREFERENCE_DATE, turns=turns)
            records.append(PrefRecord(form, topic, index, record["question"], session, gold))
    return records


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


def run_prefeval(
    directory: Path,
    context: Context,
    systems: tuple[str, ...],
    fillers: tuple[int, ...] = (10, 100, 300),
    limit: int | None = None,
    advance: Callable[[], None] = lambda: None,
) -> dict[str, Any]:
    """Hit@5 and Hit@10 by form and filler count for each system."""
    store = context.store()
    records = load_records(Path(directory), store.embedder.documents, limit)
    retrievers = make_systems(store, context, systems)
    hits: dict[str, dict[str, dict[str, list[float]]]] = {s: {} for s in systems}
    for count in fillers:
        template = f"prefeval-filler-{count}"
        if not store.count_units(template):
            filler = Session(id="filler", date=FILLER_DATE, turns=filler_turns(directory, count))
            ingest_graph.invoke(IngestInput(namespace=template, sessions=[filler]), context=context)
        for record in records:
            namespace = f"prefeval/{record.form}/{record.topic}/{record.index}/N{count}"
            store.drop_namespace(namespace)
            store.clone_namespace(template, namespace)
            ingest_graph.invoke(
                IngestInput(namespace=namespace, sessions=[record.session]), context=context
            )
            for system in retrievers:
                ids = system.retrieve(namespace, record.question, max(HIT_KS))
                units = store.get(namespace, ids)
                turns = list(
                    dict.fromkeys(t for mid in ids if mid in units
                                  for t in units[mid].provenance.turn_ids)
                )  # fmt: skip
                bucket = hits[system.name].setdefault(f"{record.form}/N={count}", {})
                for k in HIT_KS:
                    bucket.setdefault(f"Hit@{k}", []).append(hit_at(turns, record.gold, k))
            store.drop_namespace(namespace)
            advance()
    return {
        "systems": {
            name: {
                bucket: {metric: mean(values) for metric, values in scores.items()}
                for bucket, scores in buckets.items()
            }
            for name, buckets in hits.items()
        },
        "data": {
            "records": {form: sum(r.form == form for r in records) for form in FORMS},
            "fillers": list(fillers),
        },
    }
