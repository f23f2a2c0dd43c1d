"""Offline root memories (RootMem §3): rules with evidence, built from standing memories.

A root unit groups a person's state, goal/plan or relationship memories into an execution
rule ("when a request involves Maya, respect Maya's constraints: …") with the memories as
its evidence.  Offline routing activates a unit when the query names its person, or when the
query is close to the rule (for an offline unit: close to its evidence, on average).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from agent.memory import MemoryKind, MemoryUnit, RootUnit
from agent.state import QueryCues
from agent.store import MemoryStore
from agent.text import normalise_cue

_TOPICS = {
    MemoryKind.STATE: "constraints and current state",
    MemoryKind.GOAL: "goals and plans",
    MemoryKind.PLAN: "goals and plans",
    MemoryKind.RELATIONSHIP: "relationships",
}


def _subject(memory: MemoryUnit) -> str:
    """Whom a standing memory is about: the first person named besides the speaker."""
    speaker = normalise_cue(memory.provenance.speaker or "")
    others = [p for p in memory.people if normalise_cue(p) != speaker]
    return others[0] if others else (memory.provenance.speaker or "the user")


Groups = dict[tuple[str, str], list[MemoryUnit]]


def grouped(groups: Groups, units: Sequence[MemoryUnit]) -> Groups:
    """The groups with the units' standing memories added by (person, topic), in write order."""
    merged = {key: list(members) for key, members in groups.items()}
    for memory in units:
        topic = _TOPICS.get(memory.kind)
        if topic is not None:
            merged.setdefault((_subject(memory), topic), []).append(memory)
    return merged


def build_roots(groups: Groups, max_units: int, evidence: int) -> list[RootUnit]:
    """The largest (person, topic) groups of standing memories become root units."""
    ranked = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))[:max_units]
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
        groups = store.follow("root groups", namespace, lambda units: grouped({}, units), grouped)
        roots = build_roots(groups, max_units, evidence)
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
) -> list[tuple[RootUnit, float]]:
    """Active units with their routing score (the query–rule cosine).

    Root units carry decision logic (RootMem routes them for recommendation, advice and
    planning queries): a unit applies when a decision question names its person, or when any
    question is as close to its rule as ``threshold``.  A factual question that merely names a
    person does not pull in that person's whole standing context.
    """
    named = {normalise_cue(p) for p in cues.people}
    active = []
    for root, rule_vector in zip(roots, rule_vectors, strict=True):
        similarity = float(rule_vector @ query_vector)
        decision_about_person = cues.decision and normalise_cue(root.person) in named
        if decision_about_person or similarity >= threshold:
            active.append((root, round(similarity, 4)))
    return sorted(active, key=lambda item: -item[1])
