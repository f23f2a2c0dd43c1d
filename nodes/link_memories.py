"""Ingest node: semantic and structural edges for the memories just written."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ripplegraph.agent.context import Context
from ripplegraph.agent.decisions.linking import link_units
from ripplegraph.agent.services import scope
from ripplegraph.agent.state import IngestState, TraceEvent
from ripplegraph.agent.tracing import record


def link_memories(state: IngestState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Link new memories into the namespace's sparse typed graph."""
    run = scope(runtime, state.namespace)
    store = run.store()
    ids = [*state.written_ids, *state.resumed_ids]
    added = link_units(store, run.namespace, ids, run.deployment.building.linking)
    return {
        "edges_added": added,
        "units_total": store.count_units(run.namespace),
        "trace": record(
            runtime,
            TraceEvent(
                node="link_memories",
                decision="linked" if ids else "nothing to link",
                reason=", ".join(f"{n} {t} edges" for t, n in added.items()),
            ),
        ),
    }
