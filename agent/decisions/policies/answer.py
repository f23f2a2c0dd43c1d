"""Offline answer: extractive — it states the evidence that bears on the question."""

from __future__ import annotations

from collections.abc import Sequence

from ripplegraph.agent.memory import MemoryKind
from ripplegraph.agent.state import Evidence

_CONSTRAINT_CHANNELS = {"root", "counterfactual"}


def extractive_answer(question: str, evidence: Sequence[Evidence], limit: int = 5) -> str:
    """Constraints first, then the best other evidence; says no language model was used."""
    candidates = [
        e
        for e in evidence
        if e.memory.kind is MemoryKind.STATE
        or _CONSTRAINT_CHANNELS & {s.channel for s in e.sources}
    ]
    # A stated state (an allergy, an injury) outranks a memory merely reached by a
    # constraint-seeking channel; within each group the evidence order stands.
    constraints = sorted(candidates, key=lambda e: e.memory.kind is not MemoryKind.STATE)[:3]
    others = [e for e in evidence if e not in constraints][: max(0, limit - len(constraints))]
    lines = ["(Running without a language model: this is the evidence memory holds, not advice.)"]
    if not evidence:
        lines.append(f"Memory holds nothing that bears on: {question}")
    if constraints:
        lines.append("Constraints to respect:")
        lines += [f"- {e.memory.text} [{e.memory.id}]" for e in constraints]
    if others:
        lines.append("Relevant memories:")
        lines += [f"- {e.memory.text} [{e.memory.id}]" for e in others]
    return "\n".join(lines)
