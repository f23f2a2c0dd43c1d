"""Ingest node: root-memory consolidation Φ_C every batch of new memories (RootMem §3.1)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ripplegraph.agent.context import Context
from ripplegraph.agent.decisions.roles import Usage
from ripplegraph.agent.decisions.roles import consolidate_roots as consolidate
from ripplegraph.agent.services import scope
from ripplegraph.agent.state import IngestState, TraceEvent
from ripplegraph.agent.tracing import record
from ripplegraph.prompts import root_consolidation

_MAX_UNITS = 10  # RootMem's unit budget


def consolidate_roots(state: IngestState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Fold every full batch of new memories into the root units; keep the rest for later.

    Stale units (some of their evidence was forgotten) are handed to the model with the
    batch, so their rules are rewritten from the evidence that remains.
    """
    run = scope(runtime, state.namespace)
    context = run.context
    caller = run.caller()
    if caller is None:
        event = TraceEvent(
            node="consolidate_roots",
            decision="skipped",
            reason="offline: root units are derived from standing memories at recall time",
        )
        return {"trace": record(runtime, event)}
    store = run.store()
    store.add_pending_roots(run.namespace, [*state.written_ids, *state.resumed_ids])
    pending = store.pending_roots(run.namespace)
    batch = max(run.deployment.building.root_batch, 1)
    allowance = state.spent.left_of(context.ingest_budget.limit)
    usage = Usage()
    touched: list[str] = []
    batches = 0
    while len(pending) >= batch:
        chunk, pending = pending[:batch], pending[batch:]
        units = store.root_units(run.namespace, include_stale=True)
        memories = list(store.get(run.namespace, chunk).values())
        result, spent = consolidate(
            caller, run.namespace, units, memories, usage.left(allowance), _MAX_UNITS
        )
        usage.absorb(spent)
        if result is None:
            break  # the batch stays pending for the next ingest
        before = {u.id: u for u in store.root_units(run.namespace)}
        store.replace_root_units(run.namespace, result)
        store.clear_pending_roots(chunk)
        touched += [u.id for u in result if before.get(u.id) != u]
        batches += 1
    event = TraceEvent(
        node="consolidate_roots",
        decision=f"{batches} batch(es) consolidated" if batches else "waiting for a full batch",
        reason=f"{len(pending)} memories pending (batch {batch}); "
        f"{len(touched)} unit(s) touched" + (f"; {usage.note}" if usage.note else ""),
        details={"roots_touched": touched, "llm": usage.trace(root_consolidation.ROLE.name)},
    )
    return {
        "roots_touched": touched,
        **usage.spent.counters(),
        "trace": record(runtime, event),
    }
