"""Cue extraction: people, places and time intervals found in text.

RippleMem keeps person, place and time cues on every memory so that events phrased
differently can still be linked and found.  Offline, cues come from rules: a gazetteer of the
namespace's known people and places, a few capitalisation patterns, and relative dates resolved
against the session date by ``dateparser`` (which gives the point and its granularity; the
granularity becomes the interval: "last week" is that whole week, "in May 2023" that month).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

from dateparser.date import DateDataParser

from ripplegraph.agent.memory import TimeInterval
from ripplegraph.agent.memory.text import normalise_cue

_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december"
    "|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_COUNT = r"\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a\s+few|a\s+couple\s+of|few"
_ORDINAL = r"\d{1,2}(?:st|nd|rd|th)?"

# Candidate temporal expressions; dateparser resolves each one against the session date.
_TIME_EXPRESSION = re.compile(
    "|".join(
        (
            r"\b(?:yesterday|today|tonight|last\s+night|this\s+(?:morning|afternoon|evening))\b",
            rf"\b(?:last|next|this|past)\s+(?:week|month|year|weekend|{_WEEKDAYS})\b",
            rf"\b(?:{_COUNT})\s+(?:days?|weeks?|months?|years?|weekends?)\s+ago\b",
            rf"\b(?:{_MONTHS})\.?\s+{_ORDINAL},?\s+\d{{4}}\b",
            rf"\b{_ORDINAL}\s+(?:of\s+)?(?:{_MONTHS})\.?,?\s+\d{{4}}\b",
            rf"\b(?:{_MONTHS})\.?,?\s+\d{{4}}\b",
            rf"\b(?:{_MONTHS})\.?\s+{_ORDINAL}\b(?!\s*(?:am|pm|:))",
            rf"\b{_ORDINAL}\s+(?:of\s+)?(?:{_MONTHS})\b",
            rf"\bon\s+(?:{_WEEKDAYS})\b",
            r"\b(?:in|since|during|of)\s+(?:19|20)\d{2}\b",
        )
    ),
    re.IGNORECASE,
)
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "few": 3, "a few": 3, "a couple of": 2,
}  # fmt: skip
_WEEKEND = re.compile(
    rf"\b(?:(?P<which>last|next|this|past)\s+weekend|(?P<count>{_COUNT})\s+weekends?\s+ago)\b",
    re.IGNORECASE,
)
_FEW_DAYS = re.compile(r"\b(?:a\s+few|a\s+couple\s+of|few)\s+days\s+ago\b", re.IGNORECASE)


def _period_interval(moment: datetime, period: str) -> TimeInterval:
    """Widen a resolved point to the interval its granularity names."""
    day = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "week":
        start = day - timedelta(days=day.weekday())
        return TimeInterval(start=start, end=start + timedelta(days=7))
    if period == "month":
        start = day.replace(day=1)
        nxt = (start + timedelta(days=32)).replace(day=1)
        return TimeInterval(start=start, end=nxt)
    if period == "year":
        start = day.replace(month=1, day=1)
        return TimeInterval(start=start, end=start.replace(year=start.year + 1))
    return TimeInterval.day_of(moment)


def _weekend_interval(match: re.Match[str], base: datetime) -> TimeInterval:
    """Resolve weekend expressions, which dateparser does not understand."""
    day = base.replace(hour=0, minute=0, second=0, microsecond=0)
    saturday = day + timedelta(days=(5 - day.weekday()) % 7)  # this coming (or current) one
    if day.weekday() == 6:
        saturday = day - timedelta(days=1)
    which = (match.group("which") or "").lower()
    if which in ("last", "past"):
        saturday -= timedelta(days=7)
    elif which == "next":
        saturday += timedelta(days=7)
    elif match.group("count"):
        count = match.group("count").lower()
        weeks = int(count) if count.isdigit() else _NUMBER_WORDS.get(re.sub(r"\s+", " ", count), 1)
        saturday -= timedelta(days=7 * weeks)
    return TimeInterval(start=saturday, end=saturday + timedelta(days=2))


@lru_cache(maxsize=256)
def _parser_for(base: datetime) -> DateDataParser:
    """A parser whose relative dates count from ``base``; sessions reuse theirs."""
    return DateDataParser(
        languages=["en"],
        settings={
            "RELATIVE_BASE": base,
            "PREFER_DATES_FROM": "past",
            "RETURN_TIME_AS_PERIOD": True,
            "PREFER_DAY_OF_MONTH": "first",
        },
    )


class TimeResolver:
    """Finds temporal expressions in text and resolves them against a base date."""

    def resolve(self, expression: str, base: datetime) -> TimeInterval | None:
        """Resolve one expression ("last week", "in May 2023") to an interval, or None."""
        weekend = _WEEKEND.search(expression)
        if weekend:
            return _weekend_interval(weekend, base)
        if _FEW_DAYS.search(expression):
            day = TimeInterval.day_of(base).start
            return TimeInterval(start=day - timedelta(days=5), end=day)
        cleaned = re.sub(r"^(?:in|on|since|during|of)\s+", "", expression.strip(), flags=re.I)
        cleaned = re.sub(r"\bpast\b", "last", cleaned, flags=re.I)
        data = _parser_for(base).get_date_data(cleaned)
        if data.date_obj is None:
            return None
        return _period_interval(data.date_obj.replace(tzinfo=None), data.period or "day")

    def find(self, text: str, base: datetime) -> list[TimeInterval]:
        """Every resolvable temporal expression in ``text``, in order of appearance."""
        found: list[TimeInterval] = []
        for match in _TIME_EXPRESSION.finditer(text):
            phrase = match.group(0)
            if re.fullmatch(r"may\s+\d{1,2}", phrase, re.I) and not phrase[0].isupper():
                continue  # "may 5" as a verb followed by a number is not a date
            interval = self.resolve(phrase, base)
            if interval is not None:
                found.append(interval)
        return found


# --- people and places ---------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+|\n|[\"“(]\s*)$")
_NOT_NAMES = frozenset(
    {
        *"""
    i i'm i've i'll i'd im ive ok okay hey hi hello yes yeah no wow oh thanks thank god lol omg
    mr mrs ms dr st the a an and but or so my our your his her their it its this that these
    those we you he she they me us them what when where why how who which there here then also
    just mom dad mum mother father sister brother grandma grandpa aunt uncle christmas easter
    thanksgiving halloween new year valentine's english spanish french german chinese japanese
    american british indian lgbtq lgbt covid tv ai dm pm am
        """.split(),  # noqa: SIM905 (a word list reads better as text)
        *_MONTHS.split("|"),
        *_WEEKDAYS.split("|"),
    }
)
_NAME_CONTEXT_BEFORE = re.compile(
    r"(?:\b(?:with|and|for|told|tell|asked|ask|met|meet|called|call|texted|saw|see|visit|"
    r"visited|friend|friends|sister|brother|daughter|son|wife|husband|partner|boyfriend|"
    r"girlfriend|boss|colleague|coworker|neighbor|neighbour|cousin|niece|nephew|mom|dad|"
    r"named|called|about|like|love|miss|thanks|thank|hey|hi|hello|dear)|,)\s*$",
    re.IGNORECASE,
)
_NAME_CONTEXT_AFTER = re.compile(  # matched at a position, so no "^"
    r"(?:'s|’s|\s+(?:and|said|says|told|is|was|has|had|who|will|would|wants|loves|likes|"
    r"hates|can|can't|cannot|got|just|thinks|recommended|recommends|suggested|suggests)\b|[,!?])"
)
_PLACE_LEAD = re.compile(
    r"\b(?:at|in|from|near|around|visit|visited|visiting|(?:went|go|going|gone|moved|move|trip|"
    r"travel(?:l)?ed|flew|fly|drove|drive|back|headed|heading|way|welcome)\s+to)\s+(?:the\s+)?$",
    re.IGNORECASE,
)
_CAPITALISED_PHRASE = re.compile(
    r"[A-Z][\w'’&-]*(?:\s+(?:of\s+|the\s+|de\s+|&\s+)?[A-Z][\w'’&-]*)*"
)
_PLACE_NOUNS = re.compile(
    r"\b(?:at|in|to|from|near)\s+(?:the|a|my|our|his|her|their)\s+"
    r"(beach|park|museum|gym|office|studio|restaurant|cafe|café|school|library|hospital|church|"
    r"lake|mountains?|zoo|mall|store|shop|market|theater|theatre|cinema|concert|bar|pub|pool|"
    r"airport|station|hotel|camp|campsite|farm|garden|clinic|university|college|stadium|"
    r"festival|shelter|vet|bakery|gallery|forest|river|island|city|village)\b",
    re.IGNORECASE,
)


_POSSESSIVE = re.compile(r"['’]s$")
_NEXT_CAPITAL = re.compile(r"\s+[A-Z]")
_PREVIOUS_CAPITAL = re.compile(r"([A-Z][\w'’-]*)\s+$")
# Context patterns end at a word's start; they look back this far, not to the text's start,
# which made a long turn cost quadratic time (every lead and name context is far shorter).
_LOOKBACK = 80


def _ends_at(pattern: re.Pattern[str], text: str, end: int) -> re.Match[str] | None:
    """``pattern`` (anchored with "$") matched against the text just before ``end``."""
    return pattern.search(text, max(0, end - _LOOKBACK), end)


def _sentence_initial(text: str, position: int) -> bool:
    return _ends_at(_SENTENCE_START, text, position) is not None


@dataclass(frozen=True)
class Cues:
    """People and places mentioned in one piece of text."""

    people: tuple[str, ...]
    places: tuple[str, ...]


class CueExtractor:
    """Finds people and places with a gazetteer first and capitalisation patterns second.

    Known people and places (the namespace's cue vocabulary, plus the speakers) are matched
    anywhere, including at the start of a sentence; an unknown capitalised word counts as a
    person only where the context is name-like ("with Maya", "Maya's", "Maya said"), and an
    unknown capitalised phrase counts as a place after a locative lead ("at Harbor Grill",
    "moved to Sweden").  ``learn`` grows the vocabulary from a batch before extraction, so a
    name first seen mid-sentence is also found where it opens a sentence.
    """

    def __init__(self, people: Iterable[str] = (), places: Iterable[str] = ()) -> None:
        self._people: dict[str, str] = {}
        self._places: dict[str, str] = {}
        for person in people:
            self.add_person(person)
        for place in places:
            self.add_place(place)

    def add_person(self, name: str) -> None:
        """Add a person to the gazetteer (first spelling seen wins)."""
        key = normalise_cue(name)
        if key and key not in _NOT_NAMES:
            self._people.setdefault(key, name.strip())

    def add_place(self, name: str) -> None:
        """Add a place to the gazetteer unless it is a known person."""
        key = normalise_cue(name)
        if key and key not in self._people:
            self._places.setdefault(key, name.strip())

    @property
    def people(self) -> list[str]:
        """The known people, in the spelling first seen."""
        return list(self._people.values())

    def learn(self, text: str) -> None:
        """Grow the gazetteer from the name-like contexts in ``text``."""
        for place in self._pattern_places(text):
            self.add_place(place)
        for person in self._pattern_people(text):
            self.add_person(person)

    def extract(self, text: str, speaker: str | None = None) -> Cues:
        """People (speaker first) and places mentioned in ``text``."""
        people: dict[str, str] = {}
        if speaker:
            people[normalise_cue(speaker)] = speaker.strip()
        places: dict[str, str] = {}
        for place in [*self._pattern_places(text), *self._gazetteer(text, self._places)]:
            key = normalise_cue(place)
            if key not in self._people:
                places.setdefault(key, self._places.get(key, place))
        for person in [*self._gazetteer(text, self._people), *self._pattern_people(text)]:
            key = normalise_cue(person)
            if key not in places:
                people.setdefault(key, self._people.get(key, person))
        return Cues(people=tuple(people.values()), places=tuple(places.values()))

    @staticmethod
    @lru_cache(maxsize=64)
    def _matcher(keys: frozenset[str]) -> re.Pattern[str] | None:
        """One alternation over a vocabulary, longest names first (compiled once per set)."""
        if not keys:
            return None
        ordered = sorted(keys, key=lambda k: (-len(k), k))
        return re.compile(r"(?<![\w])(?:" + "|".join(map(re.escape, ordered)) + r")(?![\w])")

    def _gazetteer(self, text: str, vocabulary: dict[str, str]) -> list[str]:
        matcher = self._matcher(frozenset(vocabulary))
        if matcher is None:
            return []
        found = dict.fromkeys(m.group(0) for m in matcher.finditer(normalise_cue(text)))
        return [vocabulary[key] for key in found]

    def _pattern_places(self, text: str) -> list[str]:
        places = [m.group(1).lower() for m in _PLACE_NOUNS.finditer(text)]
        for match in _CAPITALISED_PHRASE.finditer(text):
            phrase = match.group(0)
            if normalise_cue(phrase) in _NOT_NAMES or normalise_cue(phrase) in self._people:
                continue
            if _ends_at(_PLACE_LEAD, text, match.start()):
                places.append(phrase)
        return places

    def _pattern_people(self, text: str) -> list[str]:
        people = []
        for match in _WORD.finditer(text):
            if not match.group(0)[:1].isupper():
                continue
            word = _POSSESSIVE.sub("", match.group(0).rstrip("'’"))
            if not word[1:].islower() or len(word) < 2:
                continue
            if normalise_cue(word) in _NOT_NAMES:
                continue
            start, end = match.start(), match.end()
            if text[end : end + 1].isalpha() or _NEXT_CAPITAL.match(text, end):
                continue  # part of a longer capitalised phrase: a title or a place, not a name
            if _ends_at(_PLACE_LEAD, text, start):
                continue
            previous = _ends_at(_PREVIOUS_CAPITAL, text, start)
            if previous and normalise_cue(previous.group(1)) not in _NOT_NAMES:
                continue
            initial = _sentence_initial(text, start)
            if (
                not initial and _ends_at(_NAME_CONTEXT_BEFORE, text, start)
            ) or _NAME_CONTEXT_AFTER.match(text, start + len(word)):
                people.append(word)
        return people
