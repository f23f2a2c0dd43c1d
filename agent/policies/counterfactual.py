"""Offline counterfactual refinement (ActMem D without a model): seek standing constraints.

"If the user does this, what could go wrong?" needs world knowledge a rule cannot have; what
rules can do is retrieve the user's standing constraints — health, diet, allergies, pets,
money, time, goals, recent changes — that concern the people in the question, ranked against
the action asked about.  Each becomes a risk statement, and the trace says that no world
knowledge was used.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from agent.memory import MemoryKind, MemoryUnit
from agent.state import QueryCues
from agent.store import MemoryStore
from agent.store.derived import DerivedCache
from agent.text import normalise_cue

CONSTRAINT = re.compile(
    r"\b(?:allerg\w*|intoleran\w*|diet\w*|vegan|vegetarian|gluten|lactose|diabet\w*|asthma|"
    r"sick|ill|injur\w*|pain|doctor|hospital|medic\w*|pregnan\w*|avoid\w*|can't|cannot|"
    r"must not|never|afraid|phobia|pet|dog|cat|puppy|kitten|budget|money|afford|expensive|"
    r"broke|savings|debt|busy|deadline|schedule|time|goal|quit|sober|recover\w*|moved|"
    r"new job|lost)\b"
)  # searched in lower-cased text: four times faster than re.IGNORECASE on long turns
_cache: DerivedCache[list[MemoryUnit]] = DerivedCache()


def _is_constraint(memory: MemoryUnit) -> bool:
    return memory.kind is MemoryKind.STATE or bool(CONSTRAINT.search(memory.text.lower()))


def _constraints(units: Sequence[MemoryUnit]) -> list[MemoryUnit]:
    return [m for m in units if _is_constraint(m)]


def standing_constraints(store: MemoryStore, namespace: str) -> list[MemoryUnit]:
    """State memories and memories that state a constraint, in write order.

    Followed per namespace: a write tests only its new units.
    """
    return store.follow(
        _cache, namespace, _constraints, lambda found, units: [*found, *_constraints(units)]
    )


def seek_constraints(
    store: MemoryStore,
    namespace: str,
    cues: QueryCues,
    query_vector: np.ndarray,
    k: int,
) -> list[tuple[MemoryUnit, float, str]]:
    """Top ``k`` constraints linked to the query's people, with a risk statement each."""
    named = {normalise_cue(p) for p in cues.people}
    candidates = [
        m
        for m in standing_constraints(store, namespace)
        if not named or named & {normalise_cue(p) for p in m.people}
    ]
    vectors = store.embeddings(namespace, [m.id for m in candidates])
    scored = sorted(
        (
            (m, float(vectors[m.id] @ query_vector) + (0.2 if m.kind is MemoryKind.STATE else 0))
            for m in candidates
            if m.id in vectors
        ),
        key=lambda item: (-item[1], item[0].id),
    )[:k]
    return [
        (m, round(score, 4), f"If the user goes ahead, this standing fact may conflict: {m.text}")
        for m, score in scored
    ]
