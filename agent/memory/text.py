"""Word-level normalisation shared by the store, the cue extractor and the policies.

Kept free of other project imports so the memory model itself can use it (a unit's terms).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
# A compact English stop-word list: function words that carry no topic.
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before
    being below between both but by can can't cannot could couldn't did didn't do does doesn't
    doing don't down during each few for from further had hadn't has hasn't have haven't having
    he he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm
    i've if in into is isn't it it's its itself let's me more most mustn't my myself no nor not
    of off on once only or other ought our ours ourselves out over own same shan't she she'd
    she'll she's should shouldn't so some such than that that's the their theirs them
    themselves then there there's these they they'd they'll they're they've this those through
    to too under until up very was wasn't we we'd we'll we're we've were weren't what what's
    when when's where where's which while who who's whom why why's with won't would wouldn't
    you you'd you'll you're you've your yours yourself yourselves just also really so yeah oh
    hey hi
    """.split()  # noqa: SIM905 (a word list reads better as text)
)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens without stop words."""
    return [t for t in _TOKEN.findall(text.lower().replace("’", "'")) if t not in STOP_WORDS]


@lru_cache(maxsize=65_536)
def stem(term: str) -> str:
    """A light suffix stripper so 'bought'/'buy' stay apart but 'mugs'/'mug' meet."""
    for suffix in ("ing", "ies", "ed", "es", "s"):
        if term.endswith(suffix) and len(term) - len(suffix) >= 3:
            return term[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return term


@lru_cache(maxsize=65_536)
def normalise_cue(value: str) -> str:
    """Canonical form of a person or place cue for indexing and comparison."""
    return re.sub(r"\s+", " ", value.replace("’", "'")).strip(" .,!?;:'\"").casefold()


_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
"""C0 and C1 control characters but tab, newline and carriage return, and lone surrogates."""


def without_controls(text: str) -> str:
    r"""``text`` with each control character a space: they print as nothing, or as commands.

    PostgreSQL cannot hold NUL in text either, so a memory never keeps one on any backend; a
    lone surrogate (a JSON escape of half a character) is no character at all.  A space, not
    nothing, because such a character mostly stood between words (``full\x02time``).
    """
    return _CONTROLS.sub(" ", text)


def visible(text: str) -> bool:
    """Whether ``text`` holds a character that shows: not only spaces, controls, zero-widths."""
    return any(unicodedata.category(char)[0] not in "CZ" for char in text)


def pieces(text: str, most: int) -> list[str]:
    """``text`` cut into pieces of at most ``most`` characters, at the widest break that fits.

    A paragraph break is preferred, then a line break, a sentence's end and a space; a piece
    with none of them is cut where it reaches ``most``.  The pieces joined are ``text``.
    """
    cut: list[str] = []
    rest = text
    while len(rest) > most:
        window = rest[: most + 1]
        at = next(
            (
                found + len(mark)
                for mark in ("\n\n", "\n", ". ", " ")
                if (found := window.rfind(mark, most // 2, most)) >= 0
            ),
            most,
        )
        cut.append(rest[:at])
        rest = rest[at:]
    return [*cut, rest]
