"""Key-value items as memories: LangGraph namespace tuples and put values, both ways.

A ``BaseStore`` client addresses memory by a namespace tuple and a key, and puts JSON values.
These pure functions decide how that maps onto RippleGraph:

- A namespace tuple is one RippleGraph namespace, its labels joined by ``/``; a character a
  namespace cannot hold (and ``/`` or ``:`` inside a label) is written ``:XX`` per UTF-8 byte,
  so the mapping is one to one and ``tuple_of`` reverses it.
- A value becomes dialogue when it has one of the shapes memory tools write: a turn
  (``{"text", "speaker", "date", "session"}``), a conversation (``{"messages": [...]}``) or
  LangMem's ``{"content": ...}``; a ``BaseStore`` ``index`` list of fields names the text
  instead.  Any other value is kept as data: ``get``, listing and filters see it, recall does
  not.
- Each turn's id is ``"<position>:<key>"``, so the units made of an item are found by their
  provenance and no two items share a turn.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote

from langgraph.store.base.embed import get_text_at_path

from ripplegraph.agent.errors import InvalidValueError
from ripplegraph.agent.memory import MAX_QUERY_CHARS, MAX_TURN_CHARS, MemoryUnit, Session, Turn
from ripplegraph.agent.memory.ingest_files import parse_date

MAX_NAMESPACE = 128
_PLAIN = re.compile(r"[A-Za-z0-9_@.-]")
_ESCAPE = re.compile(r":([0-9A-F]{2})")
_ROLES = {"human": "user", "user": "user", "ai": "assistant", "assistant": "assistant"}
ASSISTANT = "Assistant"
"""The speaker an assistant message is stored under."""


def namespace_of(labels: Sequence[str]) -> str:
    """The RippleGraph namespace of a LangGraph namespace tuple."""
    joined = "/".join(
        "".join(
            char if _PLAIN.fullmatch(char) else "".join(f":{b:02X}" for b in char.encode())
            for char in label
        )
        for label in labels
    )
    if not joined or len(joined) > MAX_NAMESPACE:
        raise InvalidValueError(
            f"namespace {tuple(labels)!r} is {len(joined)} characters once written as "
            f"{joined!r}; RippleGraph namespaces hold 1 to {MAX_NAMESPACE}"
        )
    return joined


def checked_ttl(minutes: float | None) -> float | None:
    """A time to live as given, once it is known to be positive (None: the item stays)."""
    if minutes is not None and minutes <= 0:
        raise InvalidValueError(f"a time to live must be positive, got {minutes} minutes")
    return minutes


def _checked_words(value: object, name: str, limit: int, empty: str, holder: str) -> str:
    """``value`` stripped, once it is a string that holds something and at most ``limit``."""
    if not isinstance(value, str):
        raise InvalidValueError(f"the {name} must be a string, not {type(value).__name__}")
    words = value.strip()
    if not words:
        raise InvalidValueError(empty)
    if len(words) > limit:
        raise InvalidValueError(
            f"the {name} has {len(words):,} characters; {holder} holds at most {limit:,}"
        )
    return words


def checked_said(text: object) -> str:
    """What was said, stripped, once it is text that holds something and fits one turn."""
    return _checked_words(
        text, "text", MAX_TURN_CHARS, "nothing to remember: the text is empty", "one memory"
    )


def checked_query(query: object) -> str:
    """A question, stripped, once it is text that holds something and fits a query."""
    return _checked_words(
        query, "query", MAX_QUERY_CHARS, "the query is empty: ask a question", "a query"
    )


MAX_PAGE = 10_000
"""The most items one search or listing returns."""


def checked_page(limit: object, offset: object = 0) -> tuple[int, int]:
    """A page's ``limit`` and ``offset``, once each is a whole number from 0 (limit ≤ 10,000)."""
    return _whole("limit", limit, MAX_PAGE), _whole("offset", offset, None)


def _whole(name: str, value: object, most: int | None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidValueError(f"the {name} must be a whole number, not {value!r}")
    if value < 0 or (most is not None and value > most):
        bound = f"from 0 to {most:,}" if most is not None else "0 or more"
        raise InvalidValueError(f"the {name} must be {bound}, not {value}")
    return value


def tuple_of(namespace: str) -> tuple[str, ...]:
    """The LangGraph namespace tuple of a RippleGraph namespace (``namespace_of`` reversed)."""

    def label(text: str) -> str:
        if ":" not in text or _ESCAPE.sub("", text).count(":"):  # not written by namespace_of
            return text
        try:
            return unquote(text.replace(":", "%"), errors="strict")
        except UnicodeDecodeError:
            return text

    return tuple(label(part) for part in namespace.split("/"))


def turn_id(key: str, position: int) -> str:
    """The id of an item's ``position``-th turn."""
    return f"{position}:{key}"


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # LangChain content blocks
        return " ".join(
            str(block.get("text", "")) if isinstance(block, Mapping) else str(block)
            for block in content
        ).strip()
    return json.dumps(content, ensure_ascii=False, sort_keys=True)


def _date(value: Mapping[str, Any]) -> datetime:
    raw = value.get("date")
    if raw is None:
        return datetime.now(UTC).replace(tzinfo=None)
    if isinstance(raw, datetime):
        return raw.replace(tzinfo=None)
    return parse_date(str(raw), "value.date")


def _turn(speaker: object, text: str, key: str, position: int) -> Turn:
    if len(text) > MAX_TURN_CHARS:
        raise InvalidValueError(
            f"a turn of {len(text):,} characters; one turn holds at most {MAX_TURN_CHARS:,}"
        )
    name = str(speaker or "").strip()[:200]
    return Turn(speaker=name or "User", text=text, id=turn_id(key, position))


def _message_turns(messages: object, key: str, user_name: str) -> list[Turn]:
    if not isinstance(messages, list):
        raise InvalidValueError("value.messages must be a list of messages")
    turns = []
    for position, message in enumerate(messages):
        if hasattr(message, "type") and hasattr(message, "content"):
            role, content, name = message.type, message.content, getattr(message, "name", None)
        elif isinstance(message, Mapping):
            role = message.get("role") or message.get("type")
            content, name = message.get("content"), message.get("name")
        else:
            raise InvalidValueError(f"value.messages[{position}] is not a message")
        kind = _ROLES.get(str(role))
        if kind is None:  # system and tool messages are instructions, not what was said
            continue
        speaker = name or (user_name if kind == "user" else ASSISTANT)
        text = _text(content).strip()
        if text:
            turns.append(_turn(speaker, text, key, position))
    return turns


def sessions_of(
    key: str, value: Mapping[str, Any], *, user_name: str, index: Sequence[str] | None = None
) -> list[Session]:
    """The dialogue a put value holds (none when it is data rather than something said)."""
    session = str(value.get("session") or f"item:{key}")
    if index:
        texts = [t for path in index for t in get_text_at_path(value, path)]
        turns = [_turn(value.get("speaker") or user_name, " ".join(texts), key, 0)] if texts else []
    elif "messages" in value:
        turns = _message_turns(value["messages"], key, user_name)
    elif isinstance(value.get("text"), str):
        turns = [_turn(value.get("speaker") or user_name, value["text"], key, 0)]
    elif "content" in value:
        turns = [_turn(value.get("speaker") or user_name, _text(value["content"]), key, 0)]
    else:
        return []
    turns = [t for t in turns if t.text.strip()]
    return [Session(id=session, date=_date(value), turns=turns)] if turns else []


def unit_value(unit: MemoryUnit) -> dict[str, Any]:
    """The value shown for a memory no client put (ingested from dialogue): a turn's shape."""
    provenance = unit.provenance
    return {
        "text": unit.text,
        "speaker": provenance.speaker,
        "date": provenance.session_time.isoformat() if provenance.session_time else None,
        "session": provenance.session_id,
    }


def value_text(value: Mapping[str, Any]) -> str:
    """A value's words for a listing: its text, content or messages, else its JSON."""
    if isinstance(value.get("text"), str):
        return str(value["text"])
    if "content" in value:
        return _text(value["content"])
    messages = value.get("messages")
    if isinstance(messages, list):
        said = [
            f"{m.get('name') or m.get('role')}: {_text(m.get('content'))}"
            for m in messages
            if isinstance(m, Mapping)
        ]
        return " / ".join(said)
    return json.dumps(dict(value), ensure_ascii=False, sort_keys=True)
