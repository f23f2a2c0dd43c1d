"""Offline extraction: one memory unit per dialogue turn, with rule-based cues and times.

The restatement is "Speaker: text" (an image the speaker shared is folded in as text), people
are the speaker plus names found through the namespace's gazetteer, places come from locative
patterns, and the time is the first relative or absolute date expression resolved against the
session date, else the session's day.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from ripplegraph.agent.memory import MemoryKind, MemoryUnit, Provenance, Session, TimeInterval, Turn
from ripplegraph.agent.memory.cues import CueExtractor, TimeResolver
from ripplegraph.agent.store.ids import memory_id


class Extractor(Protocol):
    """Turns dialogue sessions into memory units (offline rules or an LLM role)."""

    def extract(
        self,
        namespace: str,
        sessions: Sequence[Session],
        known_people: Sequence[str],
        known_places: Sequence[str],
    ) -> list[MemoryUnit]:
        """Memory units for ``sessions``; ids are deterministic."""
        ...


# First matching rule wins; order runs from the most decision-relevant kinds to the least.
_KIND_RULES: tuple[tuple[MemoryKind, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE))
    for kind, pattern in (
        (
            MemoryKind.STATE,
            r"\b(?:allergic|allergy|intoleran\w*|diabet\w*|pregnan\w*|vegan|vegetarian|injur\w*|"
            r"sick|ill|diagnos\w*|recover\w*|broke my|can't eat|cannot eat|don't eat|"
            r"on a diet|budget|broke|unemployed|lost my job|afraid of|scared of|phobia)\b",
        ),
        (
            MemoryKind.PLAN,
            r"\b(?:will|going to|gonna|plan(?:ning|s)? to|planned|next (?:week|month|year)|"
            r"tomorrow|this weekend|scheduled|booked|signed up)\b",
        ),
        (
            MemoryKind.GOAL,
            r"\b(?:want to|hope to|hoping to|my goal|dream(?:ing)? of|aim to|trying to|"
            r"would love to|wish)\b",
        ),
        (
            MemoryKind.RELATIONSHIP,
            r"\b(?:my (?:friend|sister|brother|mom|dad|mother|father|wife|husband|partner|"
            r"daughter|son|kids?|children|family|boyfriend|girlfriend|cousin|boss|neighbou?r)|"
            r"married|engaged|dating|broke up)\b",
        ),
        (
            MemoryKind.ASSET,
            r"\b(?:bought|buy|purchased|own|owns|got (?:a|an|my) new|adopted|my (?:car|house|"
            r"home|apartment|dog|cat|pet|puppy|kitten|bike))\b",
        ),
        (
            MemoryKind.OPINION,
            r"\b(?:i think|i believe|i love|i like|i hate|i prefer|favorite|favourite|"
            r"in my opinion|i feel like|recommend\w*)\b",
        ),
        (
            MemoryKind.BACKGROUND,
            r"\b(?:grew up|i'm from|i am from|born in|i work|my job|i studied|graduated|"
            r"years ago)\b",
        ),
        (
            MemoryKind.EXPERIENCE,
            r"\b(?:went|visited|yesterday|last (?:week|night|weekend|month|year)|did|saw|met|"
            r"tried|made|finished|started|attended)\b",
        ),
    )
)


def classify_kind(text: str) -> MemoryKind:
    """The first kind whose keyword rule matches, else ``other``."""
    for kind, pattern in _KIND_RULES:
        if pattern.search(text):
            return kind
    return MemoryKind.OTHER


def turn_text(turn: Turn) -> str:
    """The turn's words, with any shared image's caption folded in."""
    text = turn.text.strip()
    if turn.image_caption:
        text = f"{text} [shared an image: {turn.image_caption.strip()}]".strip()
    return text


def restate(turn: Turn) -> str:
    """The memory text offline extraction keeps for a turn: "Speaker: words"."""
    return f"{turn.speaker}: {turn_text(turn)}"


class OfflineExtractor:
    """One unit per turn, cues from rules; no model, no network."""

    def __init__(self, resolver: TimeResolver | None = None) -> None:
        self._resolver = resolver or TimeResolver()

    def extract(
        self,
        namespace: str,
        sessions: Sequence[Session],
        known_people: Sequence[str],
        known_places: Sequence[str],
    ) -> list[MemoryUnit]:
        """Memory units for every non-empty turn of ``sessions``."""
        speakers = [turn.speaker for session in sessions for turn in session.turns]
        cues = CueExtractor(people=[*speakers, *known_people], places=known_places)
        for session in sessions:
            for turn in session.turns:
                cues.learn(turn_text(turn))
        units: list[MemoryUnit] = []
        for session in sessions:
            for position, turn in enumerate(session.turns, start=1):
                text = turn_text(turn)
                if not text:
                    continue
                found = cues.extract(text, turn.speaker)
                time: TimeInterval | None = None
                if session.date is not None:
                    times = self._resolver.find(text, session.date)
                    time = times[0] if times else TimeInterval.day_of(session.date)
                provenance = Provenance(
                    session_id=session.id,
                    turn_ids=(turn.id or f"{session.id}:{position}",),
                    speaker=turn.speaker,
                    session_time=session.date,
                )
                restatement = restate(turn)
                units.append(
                    MemoryUnit(
                        id=memory_id(namespace, provenance, restatement),
                        namespace=namespace,
                        text=restatement,
                        people=found.people,
                        places=found.places,
                        time=time,
                        kind=classify_kind(text),
                        provenance=provenance,
                    )
                )
        return units
