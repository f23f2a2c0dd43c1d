"""Role: counterfactual reasoning — what could go wrong if the user acts (ActMem D)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field, field_validator

from ripplegraph.agent.state import Evidence
from ripplegraph.prompts.evidence import inert, render_memory
from ripplegraph.prompts.role import Role

INSTRUCTIONS = """
The user is about to act on the request. Ask yourself: if the user does this, what negative
consequences could occur, given these memories and general knowledge (health, allergies,
pets, money, schedules, relationships, recent changes)? State each risk as one short
sentence naming the person and the constraint it would hit, so it can be used to search
memory. At most 5 risks; none if nothing could reasonably go wrong.
"""


class CounterfactualOutput(BaseModel):
    """Short risk statements, used as second queries."""

    risks: list[str] = Field(default_factory=list, max_length=5)

    @field_validator("risks")
    @classmethod
    def _short_statements(cls, risks: list[str]) -> list[str]:
        cleaned = [r.strip() for r in risks if r.strip()]
        if any(len(r) > 300 for r in cleaned):
            raise ValueError("each risk must be one short sentence (≤300 characters)")
        return cleaned


ROLE = Role("counterfactual", INSTRUCTIONS, CounterfactualOutput, max_output_tokens=400)


def render(query: str, ranked: Sequence[Evidence], limit: int = 12) -> str:
    """The request and the best evidence so far."""
    memories = "\n".join(render_memory(item.memory) for item in ranked[:limit])
    return f"<request>{inert(query)}</request>\n<memories>\n{memories}\n</memories>"
