"""Offline query understanding: cues from the namespace's vocabulary, dates, terms, form."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from ripplegraph.agent.memory.cues import CueExtractor, TimeResolver
from ripplegraph.agent.memory.text import stem, tokenize
from ripplegraph.agent.state import QueryCues

_QUESTION_WORDS = frozenset(
    """
    what when where which who whom whose why how many much did does do is are was were ever
    kind sort type name tell know think should could would like
    """.split()  # noqa: SIM905 (a word list reads better as text)
)
_MULTI_PART = re.compile(
    r"\b(?:and|both|all|each|every|how many|how much|list|which \w+s|what \w+s|"
    r"total|altogether|should i|should we|in common)\b",
    re.IGNORECASE,
)
# A decision asks for advice or weighs an option; a question's own clause does not invert,
# so "novels I should read" weighs the asker's options as "should I read" does.
_DECISION = re.compile(
    r"\b(?:should (?:i|we|he|she|they)|(?:i|we) (?:should|can|could) \w+|recommend\w*|suggest\w*|"
    r"advice|advise|plan(?:ning)?|good idea|is it (?:ok|okay|safe|wise)|"
    r"can (?:i|we) (?:go|take|bring|eat|buy|book)|"
    r"what (?:gift|restaurant|present)|where (?:should|can|could) (?:i|we)|help me (?:pick|choose)|"
    r"any ideas|ideas for|"
    r"would (?:it|.*) be (?:a )?(?:good|fine|ok))\b",
    re.IGNORECASE,
)

# A request for suggestions weighs the asker's options as a decision does: "how can I…",
# "could you help me find…", "…for someone like me"; "what are some (the best)…" only when
# it names no one ("what are some of Maya's hobbies" recalls).  Nothing asked of the past
# is a request.
_REQUEST = re.compile(
    r"\bhow (?:can|could|should|might|do) (?:i|we)\b|"
    r"\b(?:can|could|would) you (?:help|suggest|find|create|make|give|put together|plan)\b|"
    r"\b(?:for|to|help) me\b|\bsomeone like me\b",
    re.IGNORECASE,
)
_NAME_WRITTEN = re.compile(r"(?<=\S)\s+([A-Z][\w-]*)")
_SUGGESTIONS = re.compile(r"\bwhat are (?:some|a few|the best|good)\b", re.IGNORECASE)
_PAST = re.compile(
    r"\b(?:did|was|were|had|mentioned|happened|used to|"
    r"(?:has|have) (?:been|\w+ed|given|told|said|done|made|seen))\b",
    re.IGNORECASE,
)

_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|we|us|our|ours)\b", re.IGNORECASE)


def content_terms(text: str, names: Sequence[str] = ()) -> list[str]:
    """Stemmed content words of a question, without question words and named cues."""
    named = {stem(t) for name in names for t in tokenize(name)}
    terms = []
    for token in tokenize(text):
        term = stem(token)
        if token in _QUESTION_WORDS or term in named or len(term) < 3:
            continue
        terms.append(term)
    return list(dict.fromkeys(terms))


def without_names(query: str, names: Sequence[str]) -> str:
    """The query with each word of the given names (and its possessive) taken out.

    Empty when fewer than two words would remain: a bare name is all the question says.
    """
    words = {w for name in names for w in tokenize(name)}
    if not words:
        return ""
    pattern = re.compile(
        r"\b(?:" + "|".join(map(re.escape, sorted(words))) + r")(?:'s|’s)?\b", re.IGNORECASE
    )
    kept = " ".join(pattern.sub(" ", query).split())
    return kept if len(kept.split()) >= 2 else ""


def is_decision(query: str, people: Sequence[str]) -> bool:
    """Whether the question asks for advice, weighs an option or asks for suggestions.

    ``people`` are the vocabulary's people the question holds: a list asked about someone is
    recalled.  Only one the question writes as a name counts (capitalised after its first
    word): offline, a vocabulary gathered from chat also holds capitalised common words
    ("Options:"), which a question writes in lower case.
    """
    if _DECISION.search(query):
        return True
    if _PAST.search(query):
        return False
    written = {w.lower() for w in _NAME_WRITTEN.findall(query)}
    named = any(set(tokenize(person)) & written for person in people)
    return bool(_REQUEST.search(query) or (not named and _SUGGESTIONS.search(query)))


def parse_query(
    query: str,
    people: Sequence[str],
    places: Sequence[str],
    reference_time: datetime | None,
    resolver: TimeResolver,
) -> QueryCues:
    """Ground a question in the namespace's cue vocabulary and its own words."""
    extractor = CueExtractor(people=people, places=places)
    cues = extractor.extract(query)
    times = resolver.find(query, reference_time) if reference_time else []
    decision = is_decision(query, cues.people)
    return QueryCues(
        people=list(cues.people),
        places=list(cues.places),
        time=times[0] if times else None,
        terms=content_terms(query, [*cues.people, *cues.places]),
        multi_part=bool(_MULTI_PART.search(query)),
        decision=decision,
        first_person=bool(_FIRST_PERSON.search(query)),
        content="" if decision else without_names(query, [*cues.people, *cues.places]),
    )
