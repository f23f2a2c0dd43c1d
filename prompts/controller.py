"""Role: the recollection controller — is the evidence sufficient, and if not, what to look for.

RippleMem §2.3: (decision, anchors, missing-support target, reason) = Π(query, cues, evidence).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from ripplegraph.agent.state import Evidence, QueryCues
from ripplegraph.prompts.evidence import inert, render_memory
from ripplegraph.prompts.role import Role

INSTRUCTIONS = """
You decide whether the retrieved memories already hold every piece of evidence needed to
answer the question. If they do, decide "stop". If a piece is missing (another event of a
set, the second number of a calculation, a constraint on a person, what happened before or
after), decide "continue": pick at most 3 anchor memories (ids from the list) near which the
missing piece is likely to be found, restate the missing piece as a short target statement,
and list the people and places it would mention. Give a one-sentence reason.
"""


class ControllerOutput(BaseModel):
    """Stop, or continue from ≤3 anchors towards a missing-support target."""

    decision: Literal["stop", "continue"]
    anchors: list[str] = Field(default_factory=list, max_length=3)
    target: str = Field(default="", max_length=500)
    target_people: list[str] = Field(default_factory=list, max_length=8)
    target_places: list[str] = Field(default_factory=list, max_length=8)
    reason: str = Field(min_length=1, max_length=500)

    @model_validator(mode="after")
    def _continue_needs_a_target(self) -> ControllerOutput:
        if self.decision == "continue" and not self.target.strip():
            raise ValueError("decision 'continue' needs a target statement")
        return self


ROLE = Role("controller", INSTRUCTIONS, ControllerOutput, max_output_tokens=400)


def render(query: str, cues: QueryCues, ranked: Sequence[Evidence], limit: int = 15) -> str:
    """The question, its cues, and the best evidence so far."""
    memories = "\n".join(render_memory(item.memory) for item in ranked[:limit])
    return (
        f"<question>{inert(query)}</question>\n"
        f"Question cues: people={cues.people}, places={cues.places}, "
        f"time={cues.time.model_dump(mode='json') if cues.time else None}\n"
        f"<memories>\n{memories}\n</memories>"
    )
