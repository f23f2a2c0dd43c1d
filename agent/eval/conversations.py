"""The benchmark conversations: LoCoMo's, REALTALK's and Mem-Gallery's, read as published.

Development means conversations of three kinds: LoCoMo's (LLM-written, ``locomo10.json``),
REALTALK's (real people over 21 days, ``data/Chat_*.json``, Lee et al. 2025) and Mem-Gallery's
(one person with an AI assistant over weeks, ``benchmark/data/dialog/*.json``, Bei et al. 2026).
Each annotates questions with the turns that hold the answer; each conversation becomes one
namespace, and ``sets`` records which kind it is, so a result can be read per kind.

REALTALK differs in layout, not in meaning: one conversation per file with its sessions
(``session_N``, dated ``session_N_date_time`` day first: ``29.12.2023, 22:42:04``) and ``qa``
at the top; a turn's words in ``clean_text``, a picture's description in ``blip_caption``.
Its turn ids are numbered by day with gaps where an image-only message was dropped upstream,
so some evidence ids name no turn: they are counted (``dropped_evidence_ids``) and left out
of the gold, and a question left without gold is skipped and counted.  Its categories are
1 multi-hop, 2 temporal and 3 inference, scored under LoCoMo's names (3 is LoCoMo's
``open-domain``, its commonsense category).

Mem-Gallery writes a session ``D1`` with its ``date`` and ``dialogues``: rounds ``D1:3`` that
hold the person's ``user`` message and the ``assistant`` reply, two turns here (``D1:3:user``
spoken by the profile's name, ``D1:3:assistant``); a round's ``image_caption`` describes its
picture, as REALTALK's captions do.  A question's ``clue`` names rounds, and a round's gold is
both of its turns.  Its kinds (``point``) are scored as LoCoMo's categories
(``MEMGALLERY_CATEGORIES``); the others, and every question that shows a picture, are counted
in ``left_out`` and not asked.
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
LOCOMO, REALTALK, MEMGALLERY = "LoCoMo", "REALTALK", "Mem-Gallery"
MEMGALLERY_CATEGORIES = {"FR": "multi-hop", "MR": "multi-hop", "KR": "multi-hop", "CD": "multi-hop"}
"""Mem-Gallery's text kinds that gather facts: multi-hop with two clue rounds or more, else
single-hop.  ``TR`` (what came before or after) is temporal; ``AR`` (no evidence) and the
picture kinds ``VS``, ``VR`` and ``TTL`` are left out."""
MEMGALLERY_TEMPORAL = "TR"
ASSISTANT = "assistant"
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
    """Each namespace's kind of conversation (``LOCOMO``, ``REALTALK`` or ``MEMGALLERY``)."""
    left_out: dict[str, int] = field(default_factory=dict)
    """Questions not asked, by why: a Mem-Gallery kind with no text evidence, or a picture."""


def load_conversations(paths: Sequence[Path], limit: int | None = None) -> LocomoData:
    """Every conversation ``paths`` name: LoCoMo's files, REALTALK's and Mem-Gallery's data.

    ``limit`` keeps the first questions (in the order the paths give) and their conversations.
    """
    data = LocomoData(sessions={}, questions=[])
    for path in paths:
        if is_realtalk(path):
            for file in chat_files(path):
                _read_realtalk(file, data)
        elif is_memgallery(path):
            for file in memgallery_files(path):
                _read_memgallery(file, data)
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
    } | {f"left_out {why}": count for why, count in sorted(data.left_out.items())}
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


def _memgallery(path: Path) -> dict[str, Any] | None:
    """The file's conversation if it is one of Mem-Gallery's, else None."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return raw if isinstance(raw, dict) and "multi_session_dialogues" in raw else None


def is_memgallery(path: Path) -> bool:
    """Whether ``path`` is Mem-Gallery's data: a folder of its dialogues, or one of them."""
    return bool(memgallery_files(path)) if path.is_dir() else _memgallery(path) is not None


def memgallery_files(path: Path) -> list[Path]:
    """Mem-Gallery's conversation files in the folder ``path``, by name (or ``path`` itself)."""
    if not path.is_dir():
        return [path]
    return [f for f in sorted(path.glob("*.json")) if _memgallery(f) is not None]


def round_turns(round_id: str) -> list[str]:
    """The ids of a Mem-Gallery round's two turns: the person's message and the reply."""
    return [f"{round_id}:user", f"{round_id}:{ASSISTANT}"]


def _read_memgallery(file: Path, data: LocomoData) -> None:
    """One Mem-Gallery conversation: its sessions under the file's stem, and its questions."""
    where = file.name
    chat = _memgallery(file)
    if chat is None:
        raise IngestFileError(f"{where}: a Mem-Gallery conversation needs multi_session_dialogues")
    namespace = file.stem
    person = str((chat.get("character_profile") or {}).get("name") or "user")
    sessions = []
    for position, raw in enumerate(chat["multi_session_dialogues"]):
        try:
            turns = []
            for dialogue in raw["dialogues"]:
                user_id, reply_id = round_turns(str(dialogue["round"]))
                caption = " ".join(dialogue.get("image_caption") or []) or None
                turns.append(
                    Turn(speaker=person, text=dialogue["user"], id=user_id, image_caption=caption)
                )
                turns.append(Turn(speaker=ASSISTANT, text=dialogue["assistant"], id=reply_id))
            date = datetime.fromisoformat(str(raw["date"])) if raw.get("date") else None
            sessions.append(Session(id=f"{namespace}/{raw['session_id']}", date=date, turns=turns))
        except (KeyError, TypeError, ValueError, ValidationError) as error:
            raise IngestFileError(
                f"{where}.multi_session_dialogues[{position}]: bad session ({error})"
            ) from error
    data.sessions[namespace] = sessions
    data.sets[namespace] = MEMGALLERY
    held = {t.id for s in sessions for t in s.turns}
    for qa in chat.get("human-annotated QAs", []):
        point = str(qa.get("point", ""))
        rounds = [str(r) for r in qa.get("clue") or []]
        if qa.get("question_image"):
            why = "showing a picture"
        elif point == MEMGALLERY_TEMPORAL:
            why, category = "", "temporal"
        elif point in MEMGALLERY_CATEGORIES:
            why, category = "", "multi-hop" if len(rounds) >= 2 else "single-hop"
        else:
            why = point or "without a kind"
        if why:
            data.left_out[why] = data.left_out.get(why, 0) + 1
            continue
        gold = [t for r in rounds for t in round_turns(r) if t in held]
        data.dropped_ids += sum(not any(t in held for t in round_turns(r)) for r in rounds)
        if not gold:
            data.questions_without_gold += 1
            continue
        data.questions.append(
            Question(namespace, str(qa["question"]), category, gold, str(qa.get("answer", "")))
        )
