"""Chat node: the user's new turn becomes a session for the ingest subgraph."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from agent.context import Context, resolve_context
from agent.memory import Session, Turn
from agent.state import ChatState, TraceEvent
from agent.tracing import record


def prepare_memories(state: ChatState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Remember what the user said (assistant replies only restate memory, so they are not)."""
    context = resolve_context(runtime.context)
    latest = next((m for m in reversed(state.messages) if isinstance(m, HumanMessage)), None)
    now = datetime.now(UTC).replace(tzinfo=None)
    sessions = []
    if latest is not None and latest.text.strip():
        turn_id = latest.id or hashlib.sha256(latest.text.encode()).hexdigest()[:16]
        sessions.append(
            Session(
                id=f"chat/{now:%Y-%m-%d}",
                date=now,
                turns=[Turn(speaker=context.user_name, text=latest.text, id=turn_id)],
            )
        )
    return {
        "sessions": sessions,
        "trace": record(
            runtime,
            TraceEvent(
                node="prepare_memories",
                decision="remember" if sessions else "nothing to remember",
                reason="the user's latest turn goes through the write path",
            ),
        ),
    }
