"""Ingest node: embed and store the drafts that are not stored yet."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from agent.context import Context
from agent.state import IngestState, TraceEvent


def write_memories(state: IngestState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Write new memories; ids are deterministic, so drafts already stored are skipped."""
    store = runtime.context.store()
    written = store.add_units(state.drafts)
    skipped = len({d.id for d in state.drafts}) - len(written)
    return {
        "written_ids": written,
        "drafts": [],
        "trace": [
            TraceEvent(
                node="write_memories",
                decision="write" if written else "nothing new",
                reason=f"{len(written)} new memories, {skipped} already stored",
                added=written,
            )
        ],
    }
