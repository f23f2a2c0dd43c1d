"""Key-value items as memories: namespace names and tuples, and put values, both ways.

A ``BaseStore`` client addresses memory by a namespace tuple and a key, and puts JSON values;
the command line, MCP, the browser and ``Memory`` name a namespace by text.  These pure
functions decide how that maps onto RippleGraph:

- A namespace tuple is one RippleGraph namespace, its labels joined by ``/``; a character a
  namespace cannot hold (anything but letters, digits and ``_ @ . -``, so ``/`` and ``:``
  inside a label too) is written ``:XX`` per UTF-8 byte, so the mapping is one to one and
  ``tuple_of`` reverses it.
- A namespace *name* is its labels written with ``/`` between them (``users/maya``); space
  around the name and around each label is dropped.  ``namespace_named`` is the one way every
  surface turns a name into the namespace it is stored under, and ``name_of`` the way back.
- A label must show something: blank, control-only or control-holding labels are refused
  (``InvalidNamespace``), whichever surface sends them.
- A value becomes dialogue when it has one of the shapes memory tools write: a turn
  (``{"text", "speaker", "date", "session"}``), a conversation (``{"messages": [...]}``) or
  LangMem's ``{"content": ...}``; a ``BaseStore`` ``index`` list of fields names the text
  instead.  Such a value that holds nothing visible is refused; any other value is kept as
  data: ``get``, listing and filters see it, recall does not.
- Each turn's id is ``"<position>:<key>"``, so the units made of an item are found by their
  provenance and no two items share a turn.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Literal
from urllib.parse import unquote

from langgraph.store.base import InvalidNamespaceError
from langgraph.store.base.embed import get_text_at_path
from pydantic import ValidationError

from ripplegraph.agent.errors import InvalidValueError
from ripplegraph.agent.memory import (
    MAX_QUERY_CHARS,
    MAX_SAID_CHARS,
    MAX_TTL_MINUTES,
    MemoryUnit,
    Session,
)
from ripplegraph.agent.memory.ingest_files import parse_date
from ripplegraph.agent.memory.text import visible, without_controls

MAX_NAMESPACE = 128
_ASCII_PLAIN = re.compile(r"[A-Za-z0-9_@.-]")  # what earlier versions kept as is
_ESCAPE = re.compile(r":([0-9A-F]{2})")
_ROLES = {"human": "user", "user": "user", "ai": "assistant", "assistant": "assistant"}
_INSTRUCTIONS = {"system", "developer", "tool", "function"}
ASSISTANT = "Assistant"
"""The speaker an assistant message is stored under."""


class InvalidNamespace(InvalidValueError, InvalidNamespaceError):
    """A namespace no surface can hold: RippleGraph's refusal and LangGraph's at once."""


def _plain(char: str) -> bool:
    """Kept as is in a namespace: a letter, a mark, a decimal digit, or one of ``_ @ . -``."""
    return char in "_@.-" or unicodedata.category(char)[0] in "LM" or char.isdecimal()


def _ascii_plain(char: str) -> bool:
    return bool(_ASCII_PLAIN.fullmatch(char))


def _spelled(labels: Sequence[str], plain: Callable[[str], bool]) -> str:
    return "/".join(
        "".join(
            char if plain(char) else "".join(f":{b:02X}" for b in char.encode()) for char in label
        )
        for label in labels
    )


def _checked_label(label: object, shown: str) -> str:
    if not isinstance(label, str) or not _utf8(label):
        raise InvalidNamespace(f"namespace {shown}: a label must be text (UTF-8)")
    if not visible(label):
        raise InvalidNamespace(
            f"namespace {shown}: a label needs a character that shows (blank, control and "
            "zero-width characters alone name nothing)"
        )
    if without_controls(label) != label:
        raise InvalidNamespace(f"namespace {shown}: a label cannot hold control characters")
    return label


def _spelled_checked(labels: Sequence[str], shown: str) -> str:
    joined = _spelled([_checked_label(label, shown) for label in labels], _plain)
    if len(joined) > MAX_NAMESPACE:
        raise InvalidNamespace(
            f"namespace {shown} is {len(joined)} characters once written as {joined!r}; "
            f"RippleGraph namespaces hold 1 to {MAX_NAMESPACE}"
        )
    return joined


def namespace_of(labels: Sequence[str]) -> str:
    """The RippleGraph namespace of a LangGraph namespace tuple."""
    if isinstance(labels, str) or not labels:
        raise InvalidNamespace(f"a namespace is a tuple of one or more labels, not {labels!r}")
    return _spelled_checked(labels, repr(tuple(labels)))


def labels_of(name: object) -> tuple[str, ...]:
    """The labels a namespace name holds (``users/maya`` → ``("users", "maya")``)."""
    if not isinstance(name, str):
        raise InvalidNamespace(f"a namespace name is text, not {type(name).__name__}")
    labels = tuple(label.strip() for label in name.strip().split("/"))
    _spelled_checked(labels, repr(name))  # refuses what no surface can hold
    return labels


def namespace_named(name: object) -> str:
    """The namespace a name given to any surface (``-n``, ``user_id``, ``ns=``) is stored under."""
    return namespace_of(labels_of(name))


def name_of(namespace: str) -> str:
    """The name a namespace is shown and given by (``namespace_named`` reversed)."""
    return "/".join(tuple_of(namespace))


def stored_namespace(labels: Sequence[str], known: Callable[[str], bool]) -> str:
    """``namespace_of``, or the spelling a store of an earlier version holds the labels under.

    Earlier versions escaped every character outside ASCII; a namespace they wrote that way
    (and not yet under today's spelling) keeps being read and written where it is.
    """
    current = namespace_of(labels)
    earlier = _spelled(labels, _ascii_plain)
    if earlier != current and not known(current) and known(earlier):
        return earlier
    return current


def checked_ttl(minutes: object) -> float | None:
    """A time to live in minutes, once it is a finite number from just above 0 to a millennium.

    None: the item stays.  Refused here, before a put is logged, so no put can be logged that
    the clock cannot finish.
    """
    if minutes is None:
        return None
    if isinstance(minutes, bool) or not isinstance(minutes, int | float):
        raise InvalidValueError(f"a time to live is a number of minutes, not {minutes!r}")
    if not math.isfinite(minutes) or not 0 < minutes <= MAX_TTL_MINUTES:
        raise InvalidValueError(
            f"a time to live must be more than 0 and at most {MAX_TTL_MINUTES:,.0f} minutes "
            f"(a thousand years), got {minutes}"
        )
    return float(minutes)


def checked_value(value: object) -> dict[str, Any]:
    """A put value, once it is a JSON object of finite numbers and UTF-8 text.

    What every backend keeps: no ``NaN``, no lone surrogate, no key that is not text.
    """
    if not isinstance(value, Mapping):
        raise InvalidValueError(f"a value is a JSON object (a dict), not {type(value).__name__}")
    try:
        json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError) as error:
        raise InvalidValueError(f"the value cannot be stored as JSON: {error}") from error
    return dict(value)


MAX_KEY = 1024
"""The longest item key."""


def checked_key(key: object) -> str:
    """An item key, once it is UTF-8 text of at most ``MAX_KEY`` characters without controls."""
    if not isinstance(key, str) or not _utf8(key):
        raise InvalidValueError(f"a key is text (UTF-8), not {type(key).__name__}")
    if len(key) > MAX_KEY or without_controls(key) != key:
        raise InvalidValueError(
            f"a key holds at most {MAX_KEY:,} characters and no control character"
        )
    return key


def checked_index(index: object) -> list[str] | Literal[False] | None:
    """A put's ``index``: None, False, or a list of field paths (LangGraph's forms)."""
    if index is None or index is False:
        return index
    if isinstance(index, list) and all(isinstance(path, str) for path in index):
        return [str(path) for path in index]
    raise InvalidValueError(f"index is None, False or a list of field paths, not {index!r}")


def _utf8(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8 (it holds no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _checked_words(value: object, name: str, limit: int, empty: str, holder: str) -> str:
    """``value`` stripped, once it is a string that shows something and at most ``limit``."""
    if not isinstance(value, str) or not _utf8(value):
        raise InvalidValueError(f"the {name} must be text (UTF-8), not {type(value).__name__}")
    words = value.strip()
    if not visible(words):
        raise InvalidValueError(empty)
    if len(words) > limit:
        raise InvalidValueError(
            f"the {name} has {len(words):,} characters; {holder} holds at most {limit:,}"
        )
    return words


def checked_said(text: object) -> str:
    """What was said, stripped, once it is text that shows something (a long one is split)."""
    return _checked_words(
        text,
        "text",
        MAX_SAID_CHARS,
        "nothing to remember: the text is empty (or only spaces, controls and zero-widths)",
        "one thing said",
    )


def checked_query(query: object) -> str:
    """A question, stripped, once it is text that shows something and fits a query."""
    return _checked_words(
        query,
        "query",
        MAX_QUERY_CHARS,
        "the query is empty (or only spaces, controls and zero-widths): ask a question",
        "a query",
    )


MAX_PAGE = 10_000
"""The most items one search or listing returns."""


def checked_page(limit: object, offset: object = 0) -> tuple[int, int]:
    """A page's ``limit`` and ``offset``, once each is a whole number from 0 (limit ≤ 10,000)."""
    return _whole("limit", limit, MAX_PAGE), _whole("offset", offset, None)


def checked_depth(depth: object) -> int | None:
    """A namespace listing's ``max_depth``: None, or a whole number from 1."""
    if depth is None:
        return None
    levels = _whole("max_depth", depth, None)
    if levels < 1:
        raise InvalidValueError(f"the max_depth must be 1 or more, not {levels}")
    return levels


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
    if content is None:
        return ""
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


def _turn(speaker: object, text: str, key: str, position: int) -> dict[str, Any]:
    """A turn as ``Session`` takes it (which cuts a long one into pieces)."""
    name = without_controls(str(speaker or "")).strip()[:200]
    return {"speaker": name or "User", "text": text, "id": turn_id(key, position)}


def _role(message: object, where: str) -> tuple[str, object, object]:
    """A message's role, content and name; refused when it is not a message."""
    if hasattr(message, "type") and hasattr(message, "content"):
        role, content, name = message.type, message.content, getattr(message, "name", None)
        if role == "chat":  # LangChain's ChatMessage names its role itself
            role = getattr(message, "role", role)
    elif isinstance(message, Mapping):
        role = message.get("role") or message.get("type")
        content, name = message.get("content"), message.get("name")
    else:
        raise InvalidValueError(f"{where} is not a message (a dict with role and content)")
    role = str(role or "").removesuffix("MessageChunk").lower()
    if role not in _ROLES and role not in _INSTRUCTIONS:
        raise InvalidValueError(
            f"{where}.role must be user, assistant, system or tool, not {role or None!r}"
        )
    return role, content, name


def checked_messages(messages: Sequence[object]) -> list[dict[str, Any]]:
    """A conversation for ``Memory.add``, as the JSON an item keeps, once every message is one.

    Each message is a role/content dict or a LangChain message; a user or assistant message
    must say something that shows (an assistant's tool call alone says nothing, and is kept
    out of memory); system and tool messages are instructions, kept in the item, not
    remembered.  A conversation with nothing to remember is refused.
    """
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise InvalidValueError("messages must be a text or a list of messages")
    plain: list[dict[str, Any]] = []
    for position, message in enumerate(messages):
        where = f"messages[{position}]"
        role, content, name = _role(message, where)
        calls = getattr(message, "tool_calls", None) or (
            message.get("tool_calls") if isinstance(message, Mapping) else None
        )
        if role in _ROLES and not visible(_text(content)) and not calls:
            raise InvalidValueError(f"{where}.content is empty: a message must say something")
        kept: dict[str, Any] = {"role": role, "content": content}
        if name:
            kept["name"] = name
        plain.append(kept)
    if not any(m["role"] in _ROLES and visible(_text(m["content"])) for m in plain):
        raise InvalidValueError("nothing to remember: no user or assistant message says anything")
    return plain


def _message_turns(messages: object, key: str, user_name: str) -> list[dict[str, Any]]:
    if not isinstance(messages, list):
        raise InvalidValueError("value.messages must be a list of messages")
    turns = []
    for position, message in enumerate(messages):
        role, content, name = _role(message, f"value.messages[{position}]")
        kind = _ROLES.get(role)
        if kind is None:  # system and tool messages are instructions, not what was said
            continue
        speaker = name or (user_name if kind == "user" else ASSISTANT)
        text = _text(content).strip()
        if visible(text):  # an assistant's tool call alone says nothing
            turns.append(_turn(speaker, text, key, position))
    return turns


def sessions_of(
    key: str, value: Mapping[str, Any], *, user_name: str, index: Sequence[str] | None = None
) -> list[Session]:
    """The dialogue a put value holds (none when it is data rather than something said).

    A value shaped as something said (``text``, ``messages``, ``content``) that says nothing
    visible is refused (``InvalidValueError``), as is a turn too long to keep.
    """
    session = str(value.get("session") or f"item:{key}")
    speaker = value.get("speaker") or user_name
    if index:
        texts = [t for path in index for t in get_text_at_path(value, path)]
        said = " ".join(texts)
        turns = [_turn(speaker, said, key, 0)] if visible(said) else []
    elif "messages" in value:
        turns = _message_turns(value["messages"], key, user_name)
        if not turns:
            raise InvalidValueError(
                "value.messages: no user or assistant message says anything to remember"
            )
    elif isinstance(value.get("text"), str) or "content" in value:
        field = "text" if isinstance(value.get("text"), str) else "content"
        said = _text(value[field]).strip()
        if not visible(said):
            raise InvalidValueError(f"value.{field} is empty: nothing to remember")
        turns = [_turn(speaker, said, key, 0)]
    else:
        return []
    if not turns:
        return []
    try:
        return [Session.model_validate({"id": session, "date": _date(value), "turns": turns})]
    except ValidationError as error:
        first = error.errors()[0]
        raise InvalidValueError(f"value: {first['msg'].removeprefix('Value error, ')}") from error


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
