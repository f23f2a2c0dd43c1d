"""Chat node: the user's new turn becomes a session for the ingest subgraph."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from ripplegraph.agent.context import Context, resolve_context
from ripplegraph.agent.memory import MAX_TURN_CHARS, Session, Turn
from ripplegraph.agent.state import ChatState, TraceEvent
from ripplegraph.agent.tracing import record


def prepare_memories(state: ChatState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Remember what the user said (assistant replies only restate memory, so they are not)."""
    context = resolve_context(runtime.context)
    latest = next((m for m in reversed(state.messages) if isinstance(m, HumanMessage)), None)
    now = datetime.now(UTC).replace(tzinfo=None)
    sessions = []
    said = latest.text if latest is not None else ""
    kept = said[:MAX_TURN_CHARS]
    if latest is not None and said.strip():
        turn_id = latest.id or hashlib.sha256(said.encode()).hexdigest()[:16]
        sessions.append(
            Session(
                id=f"chat/{now:%Y-%m-%d}",
                date=now,
                turns=[Turn(speaker=context.user_name[:200] or "User", text=kept, id=turn_id)],
            )
        )
    clamped = f" (its first {MAX_TURN_CHARS:,} of {len(said):,} characters)" if kept != said else ""
    return {
        "sessions": sessions,
        "trace": record(
            runtime,
            TraceEvent(
                node="prepare_memories",
                decision="remember" if sessions else "nothing to remember",
                reason=f"the user's latest turn{clamped} goes through the write path",
            ),
        ),
    }
