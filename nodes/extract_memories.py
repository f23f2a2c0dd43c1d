"""Ingest node: dialogue turns → cue-rich memory drafts (offline extraction policy)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from agent.context import Context, resolve_context
from agent.policies.extraction import OfflineExtractor
from agent.state import IngestState, TraceEvent
from agent.tracing import record

_extractor = OfflineExtractor()


def extract_memories(state: IngestState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Draft one memory per turn, with cues grounded in the namespace's known people."""
    context = resolve_context(runtime.context)
    store = context.store()
    people, places = store.vocabulary(state.namespace)
    drafts = _extractor.extract(state.namespace, state.sessions, people, places)
    turns = sum(len(s.turns) for s in state.sessions)
    return {
        "drafts": drafts,
        "trace": record(
            runtime,
            TraceEvent(
                node="extract_memories",
                decision="offline",
                reason=f"rule-based extraction of {turns} turns in {len(state.sessions)} sessions",
                details={"drafts": len(drafts), "known_people": len(people)},
            ),
        ),
    }
