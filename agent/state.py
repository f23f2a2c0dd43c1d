"""Graph states and their input/output contracts."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from pydantic import BaseModel, Field

from agent.memory import MemoryUnit, Namespace, Session


class TraceEvent(BaseModel):
    """One node's account of what it decided and why."""

    node: str
    decision: str
    reason: str
    added: list[str] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)


class IngestInput(BaseModel):
    """A batch of dialogue sessions to remember in one namespace."""

    namespace: Namespace
    sessions: list[Session]


class IngestOutput(BaseModel):
    """What the write path stored."""

    written_ids: list[str] = Field(default_factory=list)
    units_total: int = 0
    edges_added: dict[str, int] = Field(default_factory=dict)
    trace: Annotated[list[TraceEvent], operator.add] = Field(default_factory=list)


class IngestState(IngestInput, IngestOutput):
    """The ingest graph's working state."""

    drafts: list[MemoryUnit] = Field(default_factory=list)
