"""Role: root-memory consolidation Φ_C — update, create or merge rule units (RootMem §3.1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from ripplegraph.agent.memory import MemoryUnit, RootUnit
from ripplegraph.prompts.evidence import quote, render_memories
from ripplegraph.prompts.role import Role

INSTRUCTIONS = """
You maintain at most 10 root memory units for one user. A unit distils reusable,
personalised decision logic: whose it is, its topic, execution rules ("when recommending
food for Maya, exclude seafood: she is allergic") and the ids of the memories that are its
evidence. Given the existing units and a batch of new memories: "update" a unit whose logic
the new memories enrich or change (give its id and its full new rules and evidence),
"create" a unit for new decision logic, and "merge" units with overlapping constraints (give
the kept id in unit_id and the others in merge_ids). Memories without decision logic
(chit-chat, one-off events) need no unit. Return only the operations needed (possibly none).
"""


class RootOperation(BaseModel):
    """One change to the unit set."""

    op: Literal["update", "create", "merge"]
    unit_id: str | None = None
    merge_ids: list[str] = Field(default_factory=list, max_length=10)
    person: str = Field(min_length=1, max_length=200)
    topic: str = Field(min_length=1, max_length=200)
    rules: list[str] = Field(min_length=1, max_length=6)
    evidence_ids: list[str] = Field(min_length=1, max_length=30)

    @model_validator(mode="after")
    def _ids_fit_the_operation(self) -> RootOperation:
        if self.op in ("update", "merge") and not self.unit_id:
            raise ValueError(f"{self.op} needs unit_id")
        if self.op == "merge" and not self.merge_ids:
            raise ValueError("merge needs merge_ids")
        return self


class ConsolidationOutput(BaseModel):
    """The operations to apply."""

    operations: list[RootOperation] = Field(default_factory=list, max_length=10)


ROLE = Role("root_consolidation", INSTRUCTIONS, ConsolidationOutput, max_output_tokens=2000)


def render(units: Sequence[RootUnit], memories: Sequence[MemoryUnit]) -> str:
    """The current units and the new batch of memories."""
    existing = "\n".join(
        f'<unit id="{quote(u.id)}" person="{quote(u.person)}" topic="{quote(u.topic)}" '
        f'evidence="{quote(" ".join(u.evidence_ids))}">{quote(u.rule)}</unit>'
        for u in units
    )
    return f"<units>\n{existing}\n</units>\nNew memories:\n{render_memories(memories)}"
