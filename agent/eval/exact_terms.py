"""Exact terms among look-alikes: is the one memory holding a code found first.

A token that occurs in one memory only (an order number, a reference code, a name said once)
is the strongest evidence a question can carry.  This probe puts ``MEMORIES`` near-identical
memories through the ``BaseStore``, as an application would, differing only by a reference
code; then it searches for ``CODES`` of the codes, once as the bare code and once inside a
question, and counts where the memory holding it ranks.  The codes come from a fixed seed,
so every run asks the same.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ripplegraph.agent.context import Deployed
from ripplegraph.agent.surfaces.langgraph_store import RippleGraphStore

LABELS = ("exact-terms-probe",)
MEMORIES, CODES = 400, 60
SEED = 46


@dataclass(frozen=True)
class LookAlikes:
    """The probe's memories: each reference code and the key of the only item holding it."""

    codes: dict[str, str]


def put_look_alikes(context: Deployed, memories: int = MEMORIES, seed: int = SEED) -> LookAlikes:
    """Put ``memories`` sentences alike but for their code (``mk3f9a…``-shaped) into the store."""
    rng = random.Random(seed)
    store = RippleGraphStore(context=context)
    codes: dict[str, str] = {}
    for number in range(memories):
        code = "mk" + "".join(rng.choices("0123456789abcdef", k=10))
        key = f"note-{number}"
        text = f"Alice put the keys in the drawer, reference {code}."
        store.put(LABELS, key, {"text": text, "speaker": "Alice"})
        codes[code] = key
    return LookAlikes(codes)


def rank_of(store: RippleGraphStore, query: str, key: str, limit: int = 10) -> int | None:
    """The 1-based rank of item ``key`` in a search for ``query`` (None: not in ``limit``)."""
    keys = [item.key for item in store.search(LABELS, query=query, limit=limit)]
    return keys.index(key) + 1 if key in keys else None


def probe(context: Deployed, data: LookAlikes, codes: int = CODES) -> dict[str, int]:
    """How often the item holding a code ranks first (bare code) and in the top 3 (question)."""
    store = RippleGraphStore(context=context)
    asked = list(data.codes.items())[:codes]
    first = sum(rank_of(store, code, key) == 1 for code, key in asked)
    inside = [rank_of(store, f"What is reference {code} about?", key) for code, key in asked]
    return {
        "codes": len(asked),
        "first_for_the_code": first,
        "top_3_inside_a_question": sum(r is not None and r <= 3 for r in inside),
    }
