"""Role: the root-memory router Φ_R — which units' execution rules apply (RootMem §3.2)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from ripplegraph.agent.memory import RootUnit
from ripplegraph.prompts.evidence import quote
from ripplegraph.prompts.role import Role

INSTRUCTIONS = """
Each rule unit holds a person's decision logic (constraints, goals, relationships) with its
evidence. Decide, for the user's request, which units must be respected to answer it well:
a unit applies when acting on the request without it could go against the person's
constraints or goals, even if the request does not mention them. Return the ids of the units
that apply (possibly none) and a one-sentence reason.
"""


class RouterOutput(BaseModel):
    """Ids of the activated units."""

    active: list[str] = Field(default_factory=list, max_length=20)
    reason: str = Field(min_length=1, max_length=500)


ROLE = Role("root_router", INSTRUCTIONS, RouterOutput, max_output_tokens=300)


def render(query: str, units: Sequence[RootUnit]) -> str:
    """The request and every unit's rules, in one batch."""
    rules = "\n".join(
        f'<rule id="{quote(u.id)}" person="{quote(u.person)}">{quote(u.rule)}</rule>' for u in units
    )
    return f"<request>{quote(query)}</request>\n<rules>\n{rules}\n</rules>"
