"""RippleGraph: long-term memory for LLM agents as an explicit LangGraph state machine."""

from agent.context import Context, Deployed, Deployment
from agent.graph import (
    build_chat_graph,
    build_ingest_graph,
    build_recall_graph,
    chat_graph,
    ingest_graph,
    recall_graph,
)
from agent.memory import MemoryKind, MemoryUnit, Provenance, Session, TimeInterval, Turn
from agent.store import MemoryStore, open_store
from agent.tools import make_forget_tool, make_recall_tool

__all__ = [
    "Context",
    "Deployed",
    "Deployment",
    "MemoryKind",
    "MemoryStore",
    "MemoryUnit",
    "Provenance",
    "Session",
    "TimeInterval",
    "Turn",
    "build_chat_graph",
    "build_ingest_graph",
    "build_recall_graph",
    "chat_graph",
    "ingest_graph",
    "make_forget_tool",
    "make_recall_tool",
    "open_store",
    "recall_graph",
]
