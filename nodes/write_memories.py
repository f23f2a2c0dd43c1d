"""Ingest node: embed and store the drafts that are not stored yet."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ripplegraph.agent.context import Context
from ripplegraph.agent.services import scope
from ripplegraph.agent.state import IngestState, TraceEvent
from ripplegraph.agent.tracing import record


def write_memories(state: IngestState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Write new memories; ids are deterministic, so drafts already stored are skipped.

    Units an interrupted earlier ingest stored but never linked are handed on with the new
    ones, so re-running the ingest completes it.
    """
    run = scope(runtime, state.namespace)
    store = run.store()
    drafts = [d for d in state.drafts if d.namespace == run.namespace]  # never another tenant's
    written = store.add_units(drafts)
    skipped = len({d.id for d in drafts}) - len(written)
    unlinked = [mid for mid in store.pending_links(run.namespace) if mid not in written]
    return {
        "written_ids": written,
        "resumed_ids": unlinked,
        "drafts": [],
        "trace": record(
            runtime,
            TraceEvent(
                node="write_memories",
                decision="write" if written else "nothing new",
                reason=f"{len(written)} new memories, {skipped} already stored"
                + (f", {len(unlinked)} left unlinked by an interrupted ingest" if unlinked else ""),
                added=written,
            ),
        ),
    }
