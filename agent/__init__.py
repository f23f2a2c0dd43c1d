"""RippleGraph: long-term memory for LLM agents as an explicit LangGraph state machine."""

from agent.context import Context
from agent.graph import build_ingest_graph, ingest_graph
from agent.memory import MemoryKind, MemoryUnit, Provenance, Session, TimeInterval, Turn
from agent.store import MemoryStore, open_store

__all__ = [
    "Context",
    "MemoryKind",
    "MemoryStore",
    "MemoryUnit",
    "Provenance",
    "Session",
    "TimeInterval",
    "Turn",
    "build_ingest_graph",
    "ingest_graph",
    "open_store",
]
