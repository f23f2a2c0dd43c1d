"""Offline root memories (RootMem §3): rules with evidence, built from standing facts.

A root unit groups what a person disclosed that stands — states and changes, commitments,
preferences (``agent.policies.standing``), minus what a newer change superseded — into an
execution rule ("when a request involves Maya, respect Maya's current state and
constraints: …") with those facts as its evidence; episodes are never roots.  Offline routing
activates a unit when a decision question names its person (asked in the first person: the
units closest to it), or when the query is close to the rule (for an offline unit: close to
its evidence, on average).
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence

import numpy as np

from ripplegraph.agent.decisions.policies.counterfactual import standing_constraints
from ripplegraph.agent.decisions.policies.standing import StandingKind, standing_fact
from ripplegraph.agent.memory import MemoryUnit, RootUnit
from ripplegraph.agent.memory.text import normalise_cue
from ripplegraph.agent.state import QueryCues
from ripplegraph.agent.store import MemoryStore

_TOPICS: dict[StandingKind, str] = {
    "state": "current state and constraints",
    "change": "current state and constraints",
    "commitment": "commitments and rules",
    "preference": "preferences",
}


def _subject(memory: MemoryUnit) -> str:
    """Whom a standing memory is about: the first person named besides the speaker."""
    speaker = normalise_cue(memory.provenance.speaker or "")
    others = [p for p in memory.people if normalise_cue(p) != speaker]
    return others[0] if others else (memory.provenance.speaker or "the user")


Groups = dict[tuple[str, str], list[MemoryUnit]]


def _group(memory: MemoryUnit) -> tuple[str, str] | None:
    """The (person, topic) group of a standing memory; None for any other memory."""
    fact = standing_fact(memory)
    return None if fact is None else (_subject(memory), _TOPICS[fact.kind])


def grouped(groups: Groups, units: Sequence[MemoryUnit]) -> Groups:
    """The groups with the units' standing facts added, in write order.

    A new value (readers may hold the old one) that copies only the groups it changes.
    """
    merged = dict(groups)
    copied: set[tuple[str, str]] = set()
    for memory in units:
        key = _group(memory)
        if key is None:
            continue
        if key not in copied:
            merged[key] = list(merged.get(key, ()))
            copied.add(key)
        merged[key].append(memory)
    return merged


def ungrouped(groups: Groups, units: Sequence[MemoryUnit]) -> Groups:
    """The groups without the units: a new value that copies only the groups it changes."""
    gone = {u.id for u in units}
    merged = dict(groups)
    touched = {key for key in map(_group, units) if key is not None}
    for key in touched & groups.keys():
        kept = [m for m in groups[key] if m.id not in gone]
        if kept:
            merged[key] = kept
        else:
            del merged[key]
    return merged


def build_roots(
    groups: Groups, max_units: int, evidence: int, superseded: Collection[str] = ()
) -> list[RootUnit]:
    """The largest (person, topic) groups of active standing facts become root units."""
    active = {
        key: kept
        for key, members in groups.items()
        if (kept := [m for m in members if m.id not in superseded])
    }
    ranked = sorted(active.items(), key=lambda item: (-len(item[1]), item[0]))[:max_units]
    roots = []
    for (person, topic), members in ranked:
        recent = members[-evidence:][::-1]
        facts = "; ".join(m.text for m in recent)
        digest = hashlib.sha256(f"{person}|{topic}".encode()).hexdigest()[:12]
        roots.append(
            RootUnit(
                id=f"root_{digest}",
                rule=f"When a request involves {person}, respect {person}'s {topic}: {facts}",
                person=person,
                topic=topic,
                evidence_ids=[m.id for m in recent],
            )
        )
    return roots


def namespace_roots(
    store: MemoryStore, namespace: str, max_units: int, evidence: int
) -> tuple[list[RootUnit], np.ndarray]:
    """Root units of a namespace and their rules' embeddings, rebuilt only after it changes.

    LLM-consolidated units when the namespace has any, else units built offline from its
    standing memories.
    """

    def build() -> tuple[list[RootUnit], np.ndarray]:
        consolidated = store.root_units(namespace)
        if consolidated:
            return consolidated, store.embedder.documents([r.rule for r in consolidated])
        groups = store.follow(
            "root groups", namespace, lambda units: grouped({}, units), grouped, ungrouped
        )
        superseded = standing_constraints(store, namespace).superseding(
            lambda ids: store.embeddings(namespace, ids)
        )
        roots = build_roots(groups, max_units, evidence, superseded)
        return roots, evidence_means(store, namespace, roots)

    return store.derived("roots", namespace, (max_units, evidence), build)


def evidence_means(store: MemoryStore, namespace: str, roots: Sequence[RootUnit]) -> np.ndarray:
    """Rule vectors of offline units: the mean of each unit's evidence vectors.

    An offline rule is its evidence restated under a fixed header, so its evidence's stored
    vectors stand for it: nothing is re-embedded when a write changes a group, and every
    fact counts, where the rule text's embedding sees only what fits the encoder's 256-token
    window.  The mean is left unnormalised, so a query's score is its mean cosine to the
    evidence: normalised, the centre of loosely related facts scores higher than any one of
    them and activates units for unrelated questions.
    """
    if not roots:
        return np.zeros((0, 0), dtype=np.float32)
    vectors = store.embeddings(namespace, [mid for r in roots for mid in r.evidence_ids])
    return np.stack(
        [
            np.mean(found, axis=0, dtype=np.float32)
            if (found := [vectors[mid] for mid in r.evidence_ids if mid in vectors])
            else store.embedder.documents([r.rule])[0]  # vectors awaiting repair
            for r in roots
        ]
    )


def route_roots(
    roots: Sequence[RootUnit],
    rule_vectors: np.ndarray,
    cues: QueryCues,
    query_vector: np.ndarray,
    threshold: float,
    decision_units: int = 2,
) -> list[tuple[RootUnit, float]]:
    """Active units with their routing score (the query–rule cosine), best first.

    Root units carry decision logic (RootMem routes them for recommendation, advice and
    planning queries), so only a decision question activates any.  It activates the units
    of the people it names, and any unit as close to its rule as ``threshold``; asked in the
    first person, it is the memory owner's own, and every unit is a candidate, the
    ``decision_units`` closest to the question taking part.  A factual question, even one
    close to a rule, is answered by its memories: a rule's evidence would only push them
    down.
    """
    named = {normalise_cue(p) for p in cues.people}
    scored = [
        (root, round(float(vector @ query_vector), 4))
        for root, vector in zip(roots, rule_vectors, strict=True)
    ]
    scored.sort(key=lambda item: (-item[1], item[0].id))
    own = cues.decision and cues.first_person
    chosen = {r.id for r, _ in scored[:decision_units]} if own else set()
    return [
        (root, score)
        for root, score in scored
        if cues.decision
        and (score >= threshold or root.id in chosen or normalise_cue(root.person) in named)
    ]
