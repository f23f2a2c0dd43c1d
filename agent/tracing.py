"""Trace events: appended to state and streamed to clients as they happen."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from ripplegraph.agent.state import TraceEvent

STREAM_EVENT_TYPE = "ripplegraph.trace"


def record(runtime: Runtime[Any], event: TraceEvent) -> list[TraceEvent]:
    """Stream ``event`` to clients (custom mode) and return it as the node's trace update.

    Outside a streaming run the writer is a no-op, so this costs nothing in ``invoke``.
    """
    runtime.stream_writer({"type": STREAM_EVENT_TYPE, **event.model_dump(mode="json")})
    return [event]
