"""Texts drawn from a small pool, for the load benchmarks (soak, tenants).

A pool of 11,520 distinct sentences about six people, their things and places: each
distinct text is embedded once per process (the embedder caches documents by text), so a run
that writes hundreds of thousands of memories measures the store, not the model.
"""

from __future__ import annotations

import random
import re

_PEOPLE = ["Maya", "Sam", "Ana", "Tom", "Lea", "Raj"]
_DOINGS = ["bought", "lost", "repaired", "borrowed", "sold", "painted"]
_THINGS = ["a kettle", "a bike", "a lamp", "boots", "a tent", "a drum", "a map", "a scarf"]
_PLACES = ["Lisbon", "Oslo", "Kyoto", "Quito", "Accra", "Hanoi", "Perth", "Cusco"]
_DAYS = ["on Monday", "on Friday", "last spring", "in May", "at the weekend"]
_QUESTIONS = [
    "What did {p} buy?",
    "Where did {p} go?",
    "What happened in {l}?",
    "Who repaired something?",
    "What does {p} own now?",
]


def sentence(rng: random.Random) -> str:
    """One sentence of the pool (11,520 distinct ones)."""
    return (
        f"{rng.choice(_PEOPLE)} {rng.choice(_DOINGS)} {rng.choice(_THINGS)} in "
        f"{rng.choice(_PLACES)} {rng.choice(_DAYS)}."
    )


def question(rng: random.Random) -> str:
    """A question about the pool's people and places."""
    return rng.choice(_QUESTIONS).format(p=rng.choice(_PEOPLE), l=rng.choice(_PLACES))


_SENTENCE = re.compile(
    "(?:{}) (?:{}) (?:{}) in (?:{}) (?:{})\\.".format(
        *("|".join(map(re.escape, words)) for words in (_PEOPLE, _DOINGS, _THINGS, _PLACES, _DAYS))
    ).encode()
)


def sentences_in(data: bytes) -> set[bytes]:
    """Every pool sentence written in ``data`` (one pass, whatever the number looked for)."""
    return set(_SENTENCE.findall(data))
