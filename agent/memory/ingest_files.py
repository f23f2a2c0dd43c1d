"""Reading ingest files: RippleGraph's documented JSON format and LoCoMo's ``locomo10.json``.

A file is parsed and validated whole before anything is written, so a bad file changes
nothing; the error names the problem and where it is.

The documented format::

    {"sessions": [
        {"id": "2024-04-23", "date": "2024-04-23T19:00:00",
         "turns": [{"speaker": "Sam", "text": "Let's try Harbor Grill.", "id": "t1",
                    "image_caption": null}]}]}

``date`` is ISO 8601 (or any date ``dateparser`` reads, e.g. "1:56 pm on 8 May, 2023");
``id`` and ``image_caption`` of a turn are optional.  A bare list of sessions is accepted too.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import dateparser
from pydantic import ValidationError

from ripplegraph.agent.errors import IngestFileError
from ripplegraph.agent.memory import FIRST_YEAR, LAST_YEAR, Session, Turn


def _location(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out.lstrip(".")


def parse_date(value: str, where: str) -> datetime:
    """An absolute session date from ISO 8601 or a phrase like "1:56 pm on 8 May, 2023".

    Years ``FIRST_YEAR`` to ``LAST_YEAR`` only (``agent.memory``).
    """
    parsed: datetime | None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        try:
            parsed = dateparser.parse(
                value.replace(" on ", " "), languages=["en"], settings={"STRICT_PARSING": False}
            )
        except (ValueError, OverflowError, TypeError):
            parsed = None
    if parsed is None:
        raise IngestFileError(f"{where}: cannot read the date {value!r}")
    if not FIRST_YEAR <= parsed.year <= LAST_YEAR:
        raise IngestFileError(
            f"{where}: the date {value!r} is outside the years {FIRST_YEAR} to {LAST_YEAR}"
        )
    return parsed.replace(tzinfo=None)


def _locomo_sessions(samples: list[Any]) -> list[Session]:
    sessions: list[Session] = []
    for index, sample in enumerate(samples):
        where = f"[{index}]"
        if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
            raise IngestFileError(f"{where}: a LoCoMo sample needs a 'conversation' object")
        sample_id = str(sample.get("sample_id") or f"conversation-{index}")
        conversation = sample["conversation"]
        keys = [k for k in conversation if re.fullmatch(r"session_\d+", k)]
        for key in sorted(keys, key=lambda k: int(k.split("_")[1])):
            turns_raw = conversation[key]
            if not isinstance(turns_raw, list):
                raise IngestFileError(f"{where}.conversation.{key}: expected a list of turns")
            date_raw = conversation.get(f"{key}_date_time")
            date = (
                parse_date(str(date_raw), f"{where}.conversation.{key}_date_time")
                if date_raw
                else None
            )
            turns: list[Turn] = []
            for position, raw in enumerate(turns_raw):
                turn_where = f"{where}.conversation.{key}[{position}]"
                if not isinstance(raw, dict):
                    raise IngestFileError(f"{turn_where}: expected a turn object")
                try:
                    turns.append(
                        Turn(
                            speaker=raw["speaker"],
                            text=raw.get("text") or "",
                            id=raw.get("dia_id"),
                            image_caption=raw.get("blip_caption"),
                        )
                    )
                except (KeyError, ValidationError, TypeError) as error:
                    raise IngestFileError(f"{turn_where}: bad turn ({error})") from error
            sessions.append(Session(id=f"{sample_id}/{key}", date=date, turns=turns))
    return sessions


def _documented_sessions(raw: Any) -> list[Session]:
    items = raw.get("sessions") if isinstance(raw, dict) else raw
    if not isinstance(items, list):
        raise IngestFileError("expected {'sessions': [...]} or a list of sessions")
    sessions: list[Session] = []
    for index, item in enumerate(items):
        where = f"sessions[{index}]"
        if isinstance(item, dict) and isinstance(item.get("date"), str):
            item = {**item, "date": parse_date(item["date"], f"{where}.date")}
        try:
            sessions.append(Session.model_validate(item))
        except ValidationError as error:
            first = error.errors()[0]
            raise IngestFileError(
                f"{where}.{_location(first['loc'])}: {first['msg']}".replace(".[", "[")
            ) from error
    ids = [s.id for s in sessions]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise IngestFileError(f"duplicate session ids: {', '.join(duplicates)}")
    return sessions


def is_locomo(raw: Any) -> bool:
    """Whether the parsed JSON looks like LoCoMo's list of conversation samples."""
    return (
        isinstance(raw, list)
        and bool(raw)
        and isinstance(raw[0], dict)
        and "conversation" in raw[0]
    )


def load_sessions(path: str | Path) -> list[Session]:
    """Parse and validate an ingest file (documented format or LoCoMo) into sessions."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError as error:
        raise IngestFileError(f"{file}: no such file") from error
    except UnicodeDecodeError as error:
        raise IngestFileError(
            f"{file}: not UTF-8 text (byte {error.start}: {error.reason})"
        ) from error
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as error:
        raise IngestFileError(
            f"{file}: invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}"
        ) from error
    try:
        return _locomo_sessions(raw) if is_locomo(raw) else _documented_sessions(raw)
    except IngestFileError as error:
        raise IngestFileError(f"{file}: {error}") from error
