"""Ingest node: dialogue turns → cue-rich memory drafts (LLM windows, or the offline policy)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ripplegraph.agent.context import Context
from ripplegraph.agent.decisions.policies.extraction import OfflineExtractor
from ripplegraph.agent.decisions.roles import extract_with_model
from ripplegraph.agent.memory import Session
from ripplegraph.agent.services import scope
from ripplegraph.agent.state import IngestState, TraceEvent
from ripplegraph.agent.tracing import record
from ripplegraph.prompts import extraction

_extractor = OfflineExtractor()


def extract_memories(state: IngestState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Draft memories from the sessions' turns that no stored memory cites yet.

    With a model: windowed schema-guided extraction (RippleMem §2.1), each window falling back
    to the offline policy when its call fails.  Offline: one memory per turn, cues grounded
    in the namespace's known people and places.
    """
    run = scope(runtime, state.namespace)
    context = run.context
    store = run.store()
    known = store.vocabulary(run.namespace)
    caller = run.caller()
    turns = sum(len(s.turns) for s in state.sessions)
    if caller is None:
        drafts = _extractor.extract(run.namespace, state.sessions, *known)
        event = TraceEvent(
            node="extract_memories",
            decision="offline",
            reason=f"rule-based extraction of {turns} turns in {len(state.sessions)} sessions",
            details={"drafts": len(drafts), "known_people": len(known[0])},
        )
        return {"namespace": run.namespace, "drafts": drafts, "trace": record(runtime, event)}
    pending = []
    for session in state.sessions:
        covered = store.covered_turns(run.namespace, session.id)
        fresh = [
            t
            for i, t in enumerate(session.turns, 1)
            if (t.id or f"{session.id}:{i}") not in covered
        ]
        if fresh:
            pending.append(Session(id=session.id, date=session.date, turns=fresh))
    allowance = state.spent.left_of(context.ingest_budget.limit)
    drafts, usage = extract_with_model(
        caller,
        run.namespace,
        pending,
        _extractor,
        known,
        allowance,
        run.deployment.building.extraction_window,
        run.deployment.building.extraction_overlap,
    )
    event = TraceEvent(
        node="extract_memories",
        decision="llm" if not usage.fallbacks else f"llm, {usage.fallbacks} window(s) offline",
        reason=f"{usage.spent.calls} call(s) over {sum(len(s.turns) for s in pending)} new turns "
        f"of {turns}; {len(drafts)} memories" + (f"; {usage.note}" if usage.note else ""),
        details={"drafts": len(drafts), "llm": usage.trace(extraction.ROLE.name)},
    )
    return {
        "namespace": run.namespace,
        "drafts": drafts,
        **usage.spent.counters(),
        "trace": record(runtime, event),
    }
