"""Standing facts: what a person discloses about their own life that holds until it changes.

RootMem's roots and ActMem's constraints are *standing* facts — states ("I'm seven months
pregnant"), status changes ("I got laid off", "we moved to Denver"), commitments and rules of
conduct ("I intend to stay sober", "I never fly"), preferences ("I dislike podcasts") — as
opposed to episodes ("discussed", "shared", "went to") and to task chatter ("write 10 tests
for it").  Offline, a standing fact is recognised by its grammar, not by its topic: a short
declarative sentence whose subject is a person (the speaker, someone they name, a pronoun, "my
sister") and whose predicate states a condition, a change of status, a commitment or a
preference.  Assistant turns, questions, requests and code never are.  The vocabulary is one
of predicates (conditions, life events, commitments, likes), and a word counts only when it
is predicated of a person: words common in any chat (time, money, schedule) match nothing.

A newer change of the same attribute supersedes an older fact ("I retired" after "I'm
self-employed").  Without a model, "same attribute" takes nearness, a shared content word or
a status change paired with the states it ends (``same_attribute``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np

from ripplegraph.agent.memory import MemoryUnit
from ripplegraph.agent.memory.text import normalise_cue, stem, tokenize

StandingKind = Literal["state", "change", "commitment", "preference"]

ASSISTANT_SPEAKERS = frozenset({"assistant", "ai", "bot", "chatbot", "system", "model"})
"""Speaker names of a model's own turns: they restate, they never disclose."""

_MAX_WORDS = 45  # a disclosure is one plain sentence; long turns are tasks or essays
_SENTENCE = re.compile(r"(?<=[.!;])\s+|\n+")
# The subject: the speaker, someone they name (names become "someone" first), a pronoun, or
# "my sister", "our dog".
_SUBJECT = r"(?:i|we|he|she|they|someone|(?:my|our) \w+)"
_BE = r"(?:'m|'s|'re| am| is| are| was| were|'ve been| have been| has been)"
_REQUEST = re.compile(
    r"^(?:please|pls|can you|could you|would you|will you|write|give|create|make|generate|"
    r"convert|explain|tell|show|help|list|translate|summari[sz]e|rewrite|fix|act as|"
    r"i (?:want|need) you|imagine|pretend|describe|compare|find)\b"
)
_CODE = re.compile(r"```|[{}<>=]|\bdef |\(\)|;\s*$", re.MULTILINE)
_CHANGE = re.compile(
    rf"\b{_SUBJECT}(?:'s|'ve)?\s+(?:\w+\s+){{0,3}}?(?:(?:just|recently|finally|also)\s+)?"
    r"(?:got (?:laid off|fired|promoted|married|engaged|divorced|diagnosed|a new job)|"
    r"(?:was|were) (?:laid off|fired|promoted|diagnosed|hired|born|married)|"
    r"retired|moved|adopted|quit|sold|lost (?:my|our|his|her|their) |tore|hurt|injured|"
    r"sprained|broke (?:my|our|his|her|their) |fractured|became|switched to|stopped|gave up|"
    r"started (?:a new|working|my new)|signed (?:the|a) (?:lease|contract)|"
    r"(?:has|have) (?:fully )?(?:healed|recovered)|changed from|updated\b.*\bfrom)|"
    r"\bdiagnosed (?:me|us|him|her|them)\b|\bcleared (?:me|him|her)\b"
)
_STATE = re.compile(
    rf"\b{_SUBJECT}{_BE}\s+(?:\w+\s+){{0,3}}?"
    r"(?:pregnant|allergic|intolerant|vegetarian|vegan|diabetic|sober|terrified|afraid|scared|"
    r"injured|recovering|retired|unemployed|self-employed|married|divorced|expecting|"
    r"on (?:a|medication|painkillers|a diet)|a (?!bit\b|little\b)\w+(?: \w+)? (?:at|on|for|in)\b)|"
    rf"\b{_SUBJECT} (?:live|lives|work|works) (?:in|at|for|as)\b|"
    rf"\b{_SUBJECT} (?:have|has) (?:a |an )?(?:\w+ )?(?:allergy|condition|disease|injury|"
    r"disorder|baby|newborn|toddler|kids|children|dog|cat|puppy|kitten)\b"
)
_COMMITMENT = re.compile(
    rf"\b{_SUBJECT}\s+(?:never|always|no longer|don't eat|do not eat|can't eat|cannot eat|"
    r"doesn't eat|avoids?|intends? to|plans? to|promised|committed|(?:am|is) committed|"
    r"refuses? to|swore)\b|"
    rf"\b{_SUBJECT}{_BE} (?:planning|training|saving) (?:to|for)\b|"
    r"\b(?:my|someone's) (?:goal|plan|rule|commitment|priority|dream) is\b"
)
_PREFERENCE = re.compile(
    rf"\b{_SUBJECT}\s+(?:\w+\s+){{0,2}}?(?:prefers?|dislikes?|hates?|loves?|enjoys?|"
    r"can't stand|cannot stand|detests?|loathes?|learns? best|works? best)\b|"
    rf"\b{_SUBJECT} (?:\w+ )?(?:have|has|feels?) (?:a |an )?(?:\w+ )?(?:aversion|preference|"
    r"dislike|weakness|soft spot)\b|\b(?:my|someone's) (?:\w+ )?favou?rite\b|"
    # a choice reveals one: "I'll go with option 1", "online classes don't appeal to me"
    r"\b(?:i'll|i will|i'd|i would) (?:rather |probably |definitely )?(?:go with|go for|pick|"
    r"choose|take option)\b|\b(?:doesn't|don't|do not|does not) (?:really )?appeal to me\b|"
    r"\bnot (?:really )?my (?:thing|style|cup of tea)\b"
)
NEAR = 0.3
"""Least cosine between a change and the older fact it supersedes."""
_FAMILIES = {
    # a status change and the states it ends; an injury and its healing must share a word
    # instead (a knee's healing says nothing of a back)
    "home": (
        re.compile(r"\b(?:moved|relocated)\b"),
        re.compile(r"\b(?:live|living|flat|apartment|house|home|rent\w*)\b"),
    ),
    "work": (
        re.compile(r"\b(?:promoted|hired|laid off|fired|retired|quit|new job|sold)\b"),
        re.compile(
            r"\b(?:work\w*|job|employed|self-employed|run|role|position|developer|engineer|"
            r"manager|business|company)\b"
        ),
    ),
    "family": (re.compile(r"\bborn\b"), re.compile(r"\b(?:pregnant|expecting)\b")),
}


@dataclass(frozen=True)
class Standing:
    """Why a memory is a standing fact: its kind and the sentence that says so."""

    kind: StandingKind
    sentence: str

    @property
    def reason(self) -> str:
        """The trace's wording."""
        return f"{self.kind}: “{self.sentence}”"


def said(memory: MemoryUnit) -> str:
    """The words of a memory without the "Speaker: " prefix offline extraction adds."""
    speaker = memory.provenance.speaker or ""
    prefix = f"{speaker}: "
    return memory.text[len(prefix) :] if speaker and memory.text.startswith(prefix) else memory.text


def standing_fact(memory: MemoryUnit) -> Standing | None:
    """The memory's standing-fact reading, or None for episodes, tasks and assistant turns."""
    if normalise_cue(memory.provenance.speaker or "") in ASSISTANT_SPEAKERS:
        return None
    names = frozenset({memory.provenance.speaker or "", *memory.people} - {""})
    return _reading(said(memory), names)


@lru_cache(maxsize=65_536)
def _reading(words: str, names: frozenset[str]) -> Standing | None:
    """Memoised: a namespace's derived values re-read every memory after a deletion."""
    if _CODE.search(words):
        return None
    for sentence in _SENTENCE.split(words):
        text = sentence.strip().replace("’", "'")
        if not text or text.endswith("?") or len(text.split()) > _MAX_WORDS:
            continue
        lowered = _named_as_someone(text, names).lower()
        if _REQUEST.match(lowered):
            continue
        kind = _kind(lowered)
        if kind is not None:
            return Standing(kind, text)
    return None


def _named_as_someone(text: str, names: frozenset[str]) -> str:
    """The sentence with each person's name (longest first) read as "someone"."""
    for name in sorted(names, key=len, reverse=True):
        text = re.sub(rf"\b{re.escape(name)}\b", "someone", text, flags=re.IGNORECASE)
    return text


def _kind(sentence: str) -> StandingKind | None:
    if _CHANGE.search(sentence):
        return "change"
    if _STATE.search(sentence):
        return "state"
    if _COMMITMENT.search(sentence):
        return "commitment"
    if _PREFERENCE.search(sentence):
        return "preference"
    return None


def _attribute_words(memory: MemoryUnit, fact: Standing) -> set[str]:
    """Stemmed content words of the fact's sentence, without the speaker's name."""
    name = {stem(t) for t in tokenize(memory.provenance.speaker or "")}
    return {stem(t) for t in tokenize(fact.sentence)} - name


def _change_family(sentence: str) -> str | None:
    lowered = sentence.lower()
    return next((name for name, (change, _) in _FAMILIES.items() if change.search(lowered)), None)


def same_attribute(
    newer: tuple[MemoryUnit, Standing], older: tuple[MemoryUnit, Standing], cosine: float
) -> bool:
    """Whether a change and an older fact of one speaker speak of the same attribute.

    They must be near (``cosine`` of their vectors at least ``NEAR``) and either share a
    content word ("my back" hurt, "my back" healed) or be a status change and the state it
    changes ("moved" and "live in", "retired" and "self-employed").  Nearness alone is not
    enough: any two health disclosures are as near as a job and a promotion.
    """
    if newer[0].provenance.speaker != older[0].provenance.speaker or cosine < NEAR:
        return False
    if _attribute_words(*newer) & _attribute_words(*older):
        return True
    family = _change_family(newer[1].sentence)
    return family is not None and bool(_FAMILIES[family][1].search(older[1].sentence.lower()))


def overridden(
    newer: int, facts: Sequence[tuple[MemoryUnit, Standing]], vectors: np.ndarray
) -> list[int]:
    """Rows of earlier facts that fact ``newer``, if a change, supersedes.

    ``facts`` are in write order with their vectors as rows.
    """
    if facts[newer][1].kind != "change" or newer == 0:
        return []
    near = vectors[:newer] @ vectors[newer]
    return [
        row
        for row in np.flatnonzero(near >= NEAR).tolist()
        if same_attribute(facts[newer], facts[row], float(near[row]))
    ]
