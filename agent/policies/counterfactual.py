"""Offline counterfactual refinement (ActMem D without a model): seek standing constraints.

"If the user does this, what could go wrong?" needs world knowledge a rule cannot have; what
rules can do is retrieve the user's standing constraints — health, diet, allergies, pets,
money, time, goals, recent changes — that concern the people in the question, ranked against
the action asked about.  Each becomes a risk statement, and the trace says that no world
knowledge was used.
"""

from __future__ import annotations

import re

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
# Whether a unit states a constraint never changes, so each unit is searched once, not once per
# namespace version: a write then costs one search, not one per stored unit.  Keyed by id.
_states_constraint: dict[str, bool] = {}
_MEMO_LIMIT = 200_000


def _is_constraint(memory: MemoryUnit) -> bool:
    if memory.kind is MemoryKind.STATE:
        return True
    found = _states_constraint.get(memory.id)
    if found is None:
        if len(_states_constraint) > _MEMO_LIMIT:
            _states_constraint.clear()
        found = _states_constraint[memory.id] = bool(CONSTRAINT.search(memory.text.lower()))
    return found


def standing_constraints(store: MemoryStore, namespace: str) -> list[MemoryUnit]:
    """State memories and memories that state a constraint, cached per namespace version."""

    def build() -> list[MemoryUnit]:
        return [m for m in store.all_units(namespace) if _is_constraint(m)]

    generation = store.relational.generation(namespace)
    return _cache.get(store.directory, namespace, generation, (), build)


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
