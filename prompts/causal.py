"""Role: causal-edge proposal — cause → effect pairs within one fact cluster (ActMem C)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field, model_validator

from ripplegraph.agent.memory import MemoryUnit
from ripplegraph.prompts.evidence import render_memories
from ripplegraph.prompts.role import Role

INSTRUCTIONS = """
These memories are about one topic. Propose the pairs where one memory is a plausible cause
of another (the puppy is teething → the shoes were chewed; moved to a new city → looking for
a gym). Use memory ids; only pairs that a careful reader would accept; none if there are none.
"""


class CausalPair(BaseModel):
    """A proposed cause → effect edge."""

    cause_id: str = Field(min_length=1)
    effect_id: str = Field(min_length=1)
    reason: str = Field(default="", max_length=300)

    @model_validator(mode="after")
    def _two_memories(self) -> CausalPair:
        if self.cause_id == self.effect_id:
            raise ValueError("a memory cannot cause itself")
        return self


class CausalOutput(BaseModel):
    """Proposed pairs (each is checked by PMI before it becomes an edge)."""

    pairs: list[CausalPair] = Field(default_factory=list, max_length=12)


ROLE = Role("causal", INSTRUCTIONS, CausalOutput, max_output_tokens=600)


def render(memories: Sequence[MemoryUnit]) -> str:
    """The cluster's memories."""
    return render_memories(memories)
