"""RippleGraph: long-term memory for LLM agents as an explicit LangGraph state machine.

Everything RippleGraph installs lives under this one name: the graphs and the library in
``ripplegraph.agent``, the graph nodes in ``ripplegraph.nodes``, the prompts in
``ripplegraph.prompts``, the demo and Studio examples in ``ripplegraph.studio``.  The public
names below load on first use: importing a light module (``ripplegraph.agent.memory``, which
the prompts use) must not build the graphs, whose nodes import the prompts.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    __version__: str

    from ripplegraph.agent.context import Context, Deployed, Deployment
    from ripplegraph.agent.errors import (
        BudgetSpent,
        ChatModelSetupError,
        EmbeddingSetupError,
        IngestFileError,
        InvalidValueError,
        ModelUnavailable,
        NotFoundError,
        PartUnavailable,
        RippleGraphError,
        StoreError,
    )
    from ripplegraph.agent.graph import (
        build_chat_graph,
        build_ingest_graph,
        build_recall_graph,
        chat_graph,
        ingest_graph,
        recall_graph,
    )
    from ripplegraph.agent.memory import (
        MemoryKind,
        MemoryUnit,
        Provenance,
        Session,
        TimeInterval,
        Turn,
    )
    from ripplegraph.agent.memory.items import InvalidNamespace
    from ripplegraph.agent.store import MemoryStore, open_store
    from ripplegraph.agent.surfaces.client import AsyncMemory, Memory
    from ripplegraph.agent.surfaces.langgraph_store import RippleGraphStore
    from ripplegraph.agent.surfaces.tools import make_forget_tool, make_recall_tool

_HOMES = {
    "AsyncMemory": "ripplegraph.agent.surfaces.client",
    "Memory": "ripplegraph.agent.surfaces.client",
    "BudgetSpent": "ripplegraph.agent.errors",
    "ChatModelSetupError": "ripplegraph.agent.errors",
    "EmbeddingSetupError": "ripplegraph.agent.errors",
    "IngestFileError": "ripplegraph.agent.errors",
    "InvalidValueError": "ripplegraph.agent.errors",
    "ModelUnavailable": "ripplegraph.agent.errors",
    "NotFoundError": "ripplegraph.agent.errors",
    "PartUnavailable": "ripplegraph.agent.errors",
    "RippleGraphError": "ripplegraph.agent.errors",
    "StoreError": "ripplegraph.agent.errors",
    "InvalidNamespace": "ripplegraph.agent.memory.items",
    "RippleGraphStore": "ripplegraph.agent.surfaces.langgraph_store",
    "Context": "ripplegraph.agent.context",
    "Deployed": "ripplegraph.agent.context",
    "Deployment": "ripplegraph.agent.context",
    "MemoryKind": "ripplegraph.agent.memory",
    "MemoryStore": "ripplegraph.agent.store",
    "MemoryUnit": "ripplegraph.agent.memory",
    "Provenance": "ripplegraph.agent.memory",
    "Session": "ripplegraph.agent.memory",
    "TimeInterval": "ripplegraph.agent.memory",
    "Turn": "ripplegraph.agent.memory",
    "build_chat_graph": "ripplegraph.agent.graph",
    "build_ingest_graph": "ripplegraph.agent.graph",
    "build_recall_graph": "ripplegraph.agent.graph",
    "chat_graph": "ripplegraph.agent.graph",
    "ingest_graph": "ripplegraph.agent.graph",
    "make_forget_tool": "ripplegraph.agent.surfaces.tools",
    "make_recall_tool": "ripplegraph.agent.surfaces.tools",
    "open_store": "ripplegraph.agent.store",
    "recall_graph": "ripplegraph.agent.graph",
}
__all__ = [
    "AsyncMemory",
    "BudgetSpent",
    "ChatModelSetupError",
    "Context",
    "Deployed",
    "Deployment",
    "EmbeddingSetupError",
    "IngestFileError",
    "InvalidNamespace",
    "InvalidValueError",
    "Memory",
    "MemoryKind",
    "MemoryStore",
    "MemoryUnit",
    "ModelUnavailable",
    "NotFoundError",
    "PartUnavailable",
    "Provenance",
    "RippleGraphError",
    "RippleGraphStore",
    "Session",
    "StoreError",
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
    """Load a public name from its module on first use (``__version__`` from the install)."""
    if name == "__version__":
        from importlib.metadata import version

        return version("ripplegraph")
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'ripplegraph' has no attribute {name!r}")
    return getattr(import_module(home), name)
