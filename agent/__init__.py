"""RippleGraph: long-term memory for LLM agents as an explicit LangGraph state machine.

The public names load on first use: importing a light module (``agent.memory``, which the
prompts use) must not build the graphs, whose nodes import the prompts.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_HOMES = {
    "Context": "agent.context",
    "Deployed": "agent.context",
    "Deployment": "agent.context",
    "MemoryKind": "agent.memory",
    "MemoryStore": "agent.store",
    "MemoryUnit": "agent.memory",
    "Provenance": "agent.memory",
    "Session": "agent.memory",
    "TimeInterval": "agent.memory",
    "Turn": "agent.memory",
    "build_chat_graph": "agent.graph",
    "build_ingest_graph": "agent.graph",
    "build_recall_graph": "agent.graph",
    "chat_graph": "agent.graph",
    "ingest_graph": "agent.graph",
    "make_forget_tool": "agent.tools",
    "make_recall_tool": "agent.tools",
    "open_store": "agent.store",
    "recall_graph": "agent.graph",
}
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


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'agent' has no attribute {name!r}")
    return getattr(import_module(home), name)
