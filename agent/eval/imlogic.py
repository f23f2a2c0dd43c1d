"""IMLogic memory-level recall: does the logical memory rank high, and above its distractor.

IMLogic (RootMem's benchmark) gives, per user, questions that each depend on a logical
memory ``memory_l`` and come with a semantic distractor ``memory_s`` that looks more relevant.
The memories of one user, taken together (every distinct ``memory_s`` and ``memory_l``), are
that user's memory.  They become what the user said: one namespace per user, one user turn
per distinct memory, in the order the file first names them, in a single session with no
date (IMLogic's memory bank carries no dates or sessions, and inventing a chronology would
give the time cue a signal the data does not have).  The speaker is the user's name, the
name the memories most often open with ("Donald Brown values…"), so the memory reads as the
user's own statement about themself.

Metrics per system: ``R@k`` (is ``memory_l`` in the top k) and ``above_distractor`` (does
``memory_l`` rank above ``memory_s``; a memory not retrieved ranks below every retrieved one),
overall, per logic category and per query type.  With a model, each system's top 30 also go
to the choice role, which picks one of the four options shuffled per question: accuracy and
which trap each wrong answer took, a judge-free score like RootMem's.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ripplegraph.agent.context import Deployed
from ripplegraph.agent.eval.metrics import KS, hit_at, mean, percentiles
from ripplegraph.agent.eval.systems import first_questions, make_systems, retrieve
from ripplegraph.agent.memory import MemoryUnit, Session, Turn
from ripplegraph.agent.models.llm import RoleCaller
from ripplegraph.agent.services import Services
from ripplegraph.agent.spend import Spend
from ripplegraph.prompts import choice
from ripplegraph.prompts.evidence import render_memories

OPTION_KINDS = ("Correct", "Trap_Preference", "Trap_Fabrication", "Trap_Generic")
ANSWER_K = 30  # evidence handed to the choice role (RootMem's retrieval cut-off)
_NAME = re.compile(r"^([A-Z][a-z]+(?: [A-Z][a-z]+)+?)(?:'s\b|\s)")


@dataclass
class ImlogicQuestion:
    """One question with the turn ids of its logical memory and its distractor."""

    namespace: str
    text: str
    category: str
    query_type: str
    logical: str
    distractor: str
    options: dict[str, str]


@dataclass
class ImlogicData:
    """One session per user namespace, and the questions."""

    sessions: dict[str, list[Session]] = field(default_factory=dict)
    questions: list[ImlogicQuestion] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)


def user_name(memories: list[str]) -> str:
    """The name a user's memories most often open with, else "User"."""
    names = Counter(m.group(1) for text in memories if (m := _NAME.match(text)))
    return names.most_common(1)[0][0] if names else "User"


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        found = sorted(path.glob("qa_user*.json"))
        if not found:
            raise FileNotFoundError(f"{path}: no qa_user*.json files")
        return found
    return [path]


def load_imlogic(path: Path, limit: int | None = None) -> ImlogicData:
    """Read IMLogic's ``qa_user*.json`` files (a folder of them, or one file)."""
    data = ImlogicData()
    for file in _files(path):
        items = json.loads(file.read_text(encoding="utf-8"))
        namespace = f"imlogic-{file.stem.removeprefix('qa_')}"
        memories = list(
            dict.fromkeys(m for item in items for m in (item["memory_s"], item["memory_l"]))
        )
        turn_of = {text: f"m{index}" for index, text in enumerate(memories, start=1)}
        speaker = user_name(memories)
        turns = [Turn(speaker=speaker, text=text, id=turn_of[text]) for text in memories]
        data.sessions[namespace] = [Session(id=f"{namespace}/memories", turns=turns)]
        for item in items:
            data.questions.append(
                ImlogicQuestion(
                    namespace=namespace,
                    text=str(item["query"]),
                    category=str(item.get("category", "unknown")),
                    query_type=str(item.get("query_type", "unknown")),
                    logical=turn_of[item["memory_l"]],
                    distractor=turn_of[item["memory_s"]],
                    options={kind: str(item["options"][kind]) for kind in OPTION_KINDS},
                )
            )
    data.questions, data.sessions = first_questions(data.questions, data.sessions, limit)
    data.counts = {
        "users": len(data.sessions),
        "memories": sum(len(s.turns) for sessions in data.sessions.values() for s in sessions),
        "questions": len(data.questions),
    }
    return data


def above_distractor(turns: list[str], logical: str, distractor: str) -> float:
    """1 when the logical memory ranks above the distractor (unretrieved ranks last)."""
    if logical not in turns:
        return 0.0
    return float(distractor not in turns or turns.index(logical) < turns.index(distractor))


def shuffled_options(question: ImlogicQuestion) -> list[tuple[str, str]]:
    """The four (kind, text) options in an order fixed by the question's text."""
    seed = int(hashlib.sha256(question.text.encode("utf-8")).hexdigest()[:12], 16)
    options = list(question.options.items())
    random.Random(seed).shuffle(options)
    return options


def choose(caller: RoleCaller, question: ImlogicQuestion, evidence: list[MemoryUnit]) -> str:
    """The option kind the model picked from the evidence, or "invalid" when it gave none."""
    options = shuffled_options(question)
    prompt = choice.render(question.text, [text for _, text in options], render_memories(evidence))
    reply = caller(choice.ROLE, prompt, Spend(calls=3, tokens=60_000))
    if reply.value is None:
        return "invalid"
    return options["ABCD".index(reply.value.choice)][0]


def run_imlogic(
    data: ImlogicData,
    context: Deployed,
    systems: tuple[str, ...],
    advance: Callable[[], None] = lambda: None,
    answerer: RoleCaller | None = None,
) -> dict[str, Any]:
    """Score each system overall, per category and per query type, with latency."""
    store = Services(context.deployment).store()
    results: dict[str, Any] = {"systems": {}, "data": data.counts, "details": {}}
    depth = max(KS)
    for system in make_systems(store, context, systems):
        buckets: dict[str, dict[str, list[float]]] = {}
        picks: Counter[str] = Counter()
        latencies: list[float] = []
        details = []
        for question in data.questions:
            found = retrieve(store, system, question.namespace, question.text, depth)
            latencies.append(found.milliseconds)
            ordered, turns = found.units, found.turns
            scores = {f"R@{k}": hit_at(turns, question.logical, k) for k in KS}
            scores["above_distractor"] = above_distractor(
                turns, question.logical, question.distractor
            )
            if answerer is not None:
                picked = choose(answerer, question, ordered[:ANSWER_K])
                picks[picked] += 1
                scores["accuracy"] = float(picked == "Correct")
            for bucket in ("overall", question.category, question.query_type):
                for metric, value in scores.items():
                    buckets.setdefault(bucket, {}).setdefault(metric, []).append(value)
            details.append(
                {
                    "namespace": question.namespace,
                    "question": question.text,
                    "category": question.category,
                    "logical": question.logical,
                    "distractor": question.distractor,
                    "retrieved": turns[:depth],
                }
            )
            advance()
        summary: dict[str, Any] = {
            bucket: {metric: mean(values) for metric, values in metrics.items()}
            for bucket, metrics in buckets.items()
        }
        summary["latency_ms"] = percentiles(latencies)
        if answerer is not None:
            wrong = sum(n for kind, n in picks.items() if kind != "Correct")
            summary["answers"] = {
                kind: picks.get(kind, 0) for kind in (*OPTION_KINDS, "invalid")
            } | {"wrong": wrong}
        results["systems"][system.name] = summary
        results["details"][system.name] = details
    return results
