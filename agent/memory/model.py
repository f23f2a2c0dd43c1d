"""The memory model: what a memory unit is, where it came from, and when it happened.

These types are shared by the store, the write path and the recall path; they carry no
behaviour beyond small interval arithmetic, so every layer can depend on them.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum
from functools import cached_property
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from ripplegraph.agent.memory.text import normalise_cue, pieces, stem, tokenize, without_controls

Namespace = Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^[\w.:@/-]{1,128}$")]
"""A tenant's memory space: 1-128 letters, digits or ``_ . : @ / -``."""


class MemoryKind(StrEnum):
    """Coarse type of a memory unit (RippleMem's event schema, RootMem's constraint kinds)."""

    BACKGROUND = "background"
    ASSET = "asset"
    EXPERIENCE = "experience"
    STATE = "state"
    OPINION = "opinion"
    GOAL = "goal"
    PLAN = "plan"
    RELATIONSHIP = "relationship"
    OTHER = "other"


class TimeInterval(BaseModel):
    """A half-open interval ``[start, end)`` of naive UTC datetimes."""

    model_config = ConfigDict(frozen=True)

    start: datetime
    end: datetime

    @model_validator(mode="after")
    def _ordered(self) -> TimeInterval:
        if self.end <= self.start:
            raise ValueError(f"time interval ends ({self.end}) before it starts ({self.start})")
        return self

    @classmethod
    def day_of(cls, moment: datetime) -> TimeInterval:
        """The calendar day containing ``moment``."""
        start = moment.replace(hour=0, minute=0, second=0, microsecond=0)
        return cls(start=start, end=start + timedelta(days=1))

    def overlaps(self, other: TimeInterval) -> bool:
        """Whether the two intervals share any instant."""
        return self.start < other.end and other.start < self.end

    def gap_days(self, other: TimeInterval) -> float:
        """Days between two intervals; 0 when they overlap."""
        if self.overlaps(other):
            return 0.0
        gap = other.start - self.end if self.end <= other.start else self.start - other.end
        return gap.total_seconds() / 86400.0


class Provenance(BaseModel):
    """Where a memory came from, so evidence can always be traced to the dialogue."""

    session_id: str
    turn_ids: tuple[str, ...] = ()
    speaker: str | None = None
    session_time: datetime | None = None


class MemoryUnit(BaseModel):
    """A cue-rich, self-contained memory: RippleMem's m = (r, v, P, L, T) plus provenance.

    The embedding ``v`` lives in the vector index, not here, to keep states small.
    """

    id: str
    namespace: Namespace
    text: str
    people: tuple[str, ...] = ()
    places: tuple[str, ...] = ()
    time: TimeInterval | None = None
    kind: MemoryKind = MemoryKind.OTHER
    provenance: Provenance

    @property
    def tokens(self) -> tuple[str, ...]:
        """Lower-cased content tokens: the BM25 document.

        Not kept: the lexical index reads them once, when the unit joins it, and every parsed
        unit the store keeps would otherwise hold them beside its ``terms``.
        """
        return tuple(tokenize(self.text))

    @cached_property
    def terms(self) -> frozenset[str]:
        """Stemmed content words and normalised cues: what coverage and matching compare."""
        return self.terms_unkept()

    def terms_unkept(self) -> frozenset[str]:
        """``terms``, computed and not kept: for a pass over every unit of a namespace.

        A unit that recall ranks keeps its terms; one only counted into a namespace's
        vocabulary would hold them (about 900 bytes) for as long as it stays parsed.
        """
        words = {stem(t) for t in self.tokens}
        return frozenset(words | {normalise_cue(c) for c in [*self.people, *self.places]})


MAX_TURN_CHARS = 20_000  # one memory's text: a longer turn is remembered as several
MAX_SAID_CHARS = 1_000_000  # one turn, kept in pieces of MAX_TURN_CHARS: past it, a document
MAX_QUERY_CHARS = 10_000  # a longer "question" is a document, not a query
MAX_TTL_MINUTES = 525_960_000.0
"""The longest time to live, a thousand years: an expiry every clock and calendar can hold."""


class Turn(BaseModel):
    """One dialogue turn as the ingest formats describe it."""

    model_config = ConfigDict(extra="forbid")

    speaker: str = Field(min_length=1, max_length=200)
    text: str = Field(max_length=MAX_TURN_CHARS)
    id: str | None = None
    image_caption: str | None = None

    @field_validator("speaker", "text", "image_caption", mode="before")
    @classmethod
    def _printable(cls, value: Any) -> Any:
        """Control characters are dropped: no backend, terminal or page should take them."""
        return without_controls(value) if isinstance(value, str) else value


FIRST_YEAR, LAST_YEAR = 1, 9000
"""The years a session date may fall in: time cues and decay do arithmetic on a session's
date, and a date at the calendar's edge would overflow there."""


class Session(BaseModel):
    """A dialogue session: turns that happened at one sitting, with the date it happened."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    date: datetime | None = None
    turns: list[Turn]

    @model_validator(mode="before")
    @classmethod
    def _long_turns_in_pieces(cls, data: Any) -> Any:
        """A turn longer than one memory (an assistant's reply with code) becomes several.

        Each piece is a turn of its own, cut at a paragraph, line or sentence where it can
        be (``agent.memory.text.pieces``); the first keeps the turn's id and picture, the
        others are ``<id>#2``, ``<id>#3``…  A turn past ``MAX_SAID_CHARS`` is refused.
        """
        if not isinstance(data, dict) or not isinstance(data.get("turns"), list):
            return data
        turns: list[Any] = []
        for turn in data["turns"]:
            text = turn.get("text") if isinstance(turn, dict) else None
            if not isinstance(text, str) or len(text) <= MAX_TURN_CHARS:
                turns.append(turn)
                continue
            if len(text) > MAX_SAID_CHARS:
                raise ValueError(
                    f"a turn of {len(text):,} characters; one turn holds at most "
                    f"{MAX_SAID_CHARS:,} (remembered in pieces of {MAX_TURN_CHARS:,})"
                )
            first = turn.get("id")
            for number, piece in enumerate(pieces(text, MAX_TURN_CHARS), start=1):
                named = first if first is None or number == 1 else f"{first}#{number}"
                caption = turn.get("image_caption") if number == 1 else None
                turns.append({**turn, "text": piece, "id": named, "image_caption": caption})
        return {**data, "turns": turns}

    @field_validator("date")
    @classmethod
    def _in_range(cls, date: datetime | None) -> datetime | None:
        if date is not None and not FIRST_YEAR <= date.year <= LAST_YEAR:
            raise ValueError(f"a session date must fall in the years {FIRST_YEAR} to {LAST_YEAR}")
        return date


class RootUnit(BaseModel):
    """A root memory unit (RootMem): an execution rule with its personalised evidence."""

    id: str
    rule: str
    person: str
    topic: str
    evidence_ids: list[str] = Field(default_factory=list)


class StoredItem(BaseModel):
    """A value a key-value client (LangGraph's ``BaseStore``) put, and the units made of it.

    The value is kept as given, so that ``get`` returns what was put; forgetting any of its
    units deletes the item with them, so the value never outlives the memory.
    """

    namespace: str
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    unit_ids: list[str] = Field(default_factory=list)
    ttl_minutes: float | None = Field(default=None, gt=0, le=MAX_TTL_MINUTES, allow_inf_nan=False)
    """How long the item lives after it is put (or read, when reads refresh it); None: always."""
    expires_at: datetime | None = None
    """When it is forgotten; None: never."""

    def expired(self, now: datetime) -> bool:
        """Whether its time to live ran out by ``now``."""
        return self.expires_at is not None and self.expires_at <= now
