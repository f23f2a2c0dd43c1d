"""The benchmark conversations: LoCoMo's and REALTALK's, read as published, as one dataset.

Development means conversations of two kinds: LoCoMo's (LLM-written, ``locomo10.json``) and
REALTALK's (real people over 21 days, ``data/Chat_*.json``, Lee et al. 2025).  Both annotate
questions with the ``dia_id`` of the turns that hold the answer; each conversation becomes one
namespace, and ``sets`` records which kind it is, so a result can be read per kind.

REALTALK differs in layout, not in meaning: one conversation per file with its sessions
(``session_N``, dated ``session_N_date_time`` day first: ``29.12.2023, 22:42:04``) and ``qa``
at the top; a turn's words in ``clean_text``, a picture's description in ``blip_caption``.
Its turn ids are numbered by day with gaps where an image-only message was dropped upstream,
so some evidence ids name no turn: they are counted (``dropped_evidence_ids``) and left out
of the gold, and a question left without gold is skipped and counted.  Its categories are
1 multi-hop, 2 temporal and 3 inference, scored under LoCoMo's names (3 is LoCoMo's
``open-domain``, its commonsense category).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ripplegraph.agent.errors import IngestFileError
from ripplegraph.agent.eval.systems import first_questions
from ripplegraph.agent.memory import Session, Turn
from ripplegraph.agent.memory.ingest_files import load_sessions

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
"""LoCoMo's question categories; REALTALK uses the first three."""
LOCOMO, REALTALK = "LoCoMo", "REALTALK"
_EVIDENCE_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
_SESSION = re.compile(r"session_(\d+)")
_REALTALK_DATE = "%d.%m.%Y, %H:%M:%S"


def normalise_evidence(raw: list[Any]) -> list[str]:
    """Split "D8:6; D9:17", repair "D:11:26" and "D30:05"; drop what has no turn number."""
    ids: list[str] = []
    for item in raw:
        for match in _EVIDENCE_ID.finditer(str(item)):
            ids.append(f"D{int(match.group(1))}:{int(match.group(2))}")
    return list(dict.fromkeys(ids))


@dataclass
class Question:
    """One benchmark question with its gold turn ids."""

    namespace: str
    text: str
    category: str
    gold: list[str]
    answer: str = ""


@dataclass
class LocomoData:
    """Conversations as sessions per namespace, questions, and what normalisation dropped."""

    sessions: dict[str, list[Session]]
    questions: list[Question]
    dropped_ids: int = 0
    questions_without_gold: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    sets: dict[str, str] = field(default_factory=dict)
    """Each namespace's kind of conversation (``LOCOMO`` or ``REALTALK``)."""


def load_conversations(paths: Sequence[Path], limit: int | None = None) -> LocomoData:
    """Every conversation ``paths`` name, LoCoMo's files and REALTALK's folders or files alike.

    ``limit`` keeps the first questions (in the order the paths give) and their conversations.
    """
    data = LocomoData(sessions={}, questions=[])
    for path in paths:
        if is_realtalk(path):
            for file in chat_files(path):
                _read_realtalk(file, data)
        else:
            _read_locomo(path, data)
    data.questions, data.sessions = first_questions(data.questions, data.sessions, limit)
    data.sets = {ns: kind for ns, kind in data.sets.items() if ns in data.sessions}
    data.counts = {
        "conversations": len(data.sessions),
        "turns": sum(len(t.turns) for s in data.sessions.values() for t in s),
        "questions": len(data.questions),
        "dropped_evidence_ids": data.dropped_ids,
        "questions_without_gold": data.questions_without_gold,
    }
    return data


def _add_questions(
    data: LocomoData, namespace: str, qas: list[Any], categories: dict[int, str]
) -> None:
    """The questions of one conversation whose gold names turns it holds."""
    turns = {t.id for s in data.sessions[namespace] for t in s.turns}
    for qa in qas:
        category = categories.get(int(qa.get("category", 0)))
        if category is None:
            continue
        raw = normalise_evidence(qa.get("evidence", []))
        gold = [turn for turn in raw if turn in turns]
        data.dropped_ids += len(raw) - len(gold) + (len(qa.get("evidence", [])) == 0)
        if not gold:
            data.questions_without_gold += 1
            continue
        reference = str(qa.get("answer", ""))
        data.questions.append(Question(namespace, str(qa["question"]), category, gold, reference))


def _read_locomo(path: Path, data: LocomoData) -> None:
    """A ``locomo10.json``-format file: sessions per conversation and the questions."""
    samples = json.loads(Path(path).read_text(encoding="utf-8"))
    everything = load_sessions(path)
    for sample in samples:
        namespace = str(sample["sample_id"])
        data.sessions[namespace] = [s for s in everything if s.id.startswith(f"{namespace}/")]
        data.sets[namespace] = LOCOMO
        _add_questions(data, namespace, sample.get("qa", []), CATEGORIES)


def is_realtalk(path: Path) -> bool:
    """Whether ``path`` is REALTALK's data: a folder of ``Chat_*.json``, or one such file."""
    if path.is_dir():
        return any(path.glob("Chat_*.json"))
    return path.name.startswith("Chat_") and path.suffix == ".json"


def chat_files(path: Path) -> list[Path]:
    """The conversation files ``path`` names, in the dataset's order."""
    return sorted(path.glob("Chat_*.json")) if path.is_dir() else [path]


def _realtalk_date(raw: object, where: str) -> datetime | None:
    if not raw:
        return None
    try:
        return datetime.strptime(str(raw).strip(), _REALTALK_DATE)
    except ValueError as error:
        raise IngestFileError(f"{where}: cannot read the date {raw!r} (day.month.year)") from error


def _read_realtalk(file: Path, data: LocomoData) -> None:
    """One REALTALK conversation: its sessions under the file's stem, and its questions."""
    where = file.name
    try:
        chat = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise IngestFileError(f"{where}: cannot read it as JSON ({error})") from error
    if not isinstance(chat, dict) or not isinstance(chat.get("qa"), list):
        raise IngestFileError(f"{where}: a REALTALK conversation needs 'session_N' and 'qa'")
    namespace = file.stem
    keys = sorted((k for k in chat if _SESSION.fullmatch(k)), key=lambda k: int(k.split("_")[1]))
    sessions = []
    for key in keys:
        turns = []
        for position, raw in enumerate(chat[key]):
            try:
                turns.append(
                    Turn(
                        speaker=raw["speaker"],
                        text=raw.get("clean_text") or "",
                        id=raw["dia_id"],
                        image_caption=raw.get("blip_caption"),
                    )
                )
            except (KeyError, TypeError, ValidationError) as error:
                raise IngestFileError(f"{where}.{key}[{position}]: bad turn ({error})") from error
        date = _realtalk_date(chat.get(f"{key}_date_time"), f"{where}.{key}_date_time")
        sessions.append(Session(id=f"{namespace}/{key}", date=date, turns=turns))
    data.sessions[namespace] = sessions
    data.sets[namespace] = REALTALK
    _add_questions(data, namespace, chat["qa"], CATEGORIES)
