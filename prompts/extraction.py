"""Role: extraction — a window of dialogue turns into cue-rich episodic events (RippleMem §2.1)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel, Field, field_validator

from ripplegraph.agent.memory import MemoryKind, Session, Turn
from ripplegraph.prompts.evidence import inert, quote
from ripplegraph.prompts.role import Role

INSTRUCTIONS = """
You turn a window of a dialogue into durable memories: events, preferences, commitments,
observations, plans, states (health, diet, pets, money, moves) and relationships worth
remembering later. Each memory is one self-contained restatement that names people instead of
pronouns and says who did what, where and when. Resolve relative times ("yesterday", "next
month") against the session date only when the dialogue supports it; give absolute ISO dates.
Leave people, places or times empty when the dialogue does not ground them: never guess.
Extract from turns marked new="true" only; the others are context. Cite the ids of the turns
each memory comes from. Chit-chat with nothing durable gives an empty list.
"""


class ExtractedEvent(BaseModel):
    """One memory: restatement, grounded cues, kind, and the turns it comes from."""

    restatement: str = Field(min_length=3, max_length=1000)
    people: list[str] = Field(default_factory=list, max_length=12)
    places: list[str] = Field(default_factory=list, max_length=8)
    time_start: datetime | None = None
    time_end: datetime | None = None
    kind: MemoryKind = MemoryKind.OTHER
    turn_ids: list[str] = Field(min_length=1, max_length=40)

    @field_validator("people", "places")
    @classmethod
    def _no_blank_names(cls, names: list[str]) -> list[str]:
        return [n.strip() for n in names if n.strip()]


class ExtractionOutput(BaseModel):
    """The events of one window (possibly none)."""

    events: list[ExtractedEvent] = Field(default_factory=list, max_length=80)


ROLE = Role("extraction", INSTRUCTIONS, ExtractionOutput, max_output_tokens=2500)


def render(session: Session, turns: Sequence[Turn], new_ids: set[str]) -> str:
    """The window as quoted turns, with the session's id and date."""
    when = session.date.isoformat(sep=" ") if session.date else "unknown"
    lines = [f"Session {quote(session.id)}, date {when}.", "<turns>"]
    for turn in turns:
        tid = quote(turn.id or "")
        new = "true" if turn.id in new_ids else "false"
        caption = f" [shares an image: {inert(turn.image_caption)}]" if turn.image_caption else ""
        lines.append(
            f'<turn id="{tid}" speaker="{quote(turn.speaker)}" new="{new}">'
            f"{inert(turn.text)}{caption}</turn>"
        )
    lines.append("</turns>")
    return "\n".join(lines)
