"""Storage: the relational side (units, cues, edges, small namespaces' vectors), Chroma, BM25."""

from ripplegraph.agent.errors import StoreError
from ripplegraph.agent.store.cue_index import CueMatch
from ripplegraph.agent.store.edges import (
    CAUSAL,
    CAUSAL_TYPES,
    CAUSED_BY,
    DIALOGUE,
    LINK_TYPES,
    REVERSE_TYPE,
    SEMANTIC,
    STRUCTURAL,
    Edge,
    EdgeType,
)
from ripplegraph.agent.store.memory_store import MemoryStore
from ripplegraph.agent.store.opening import open_store

__all__ = [
    "CAUSAL",
    "CAUSAL_TYPES",
    "CAUSED_BY",
    "DIALOGUE",
    "LINK_TYPES",
    "REVERSE_TYPE",
    "SEMANTIC",
    "STRUCTURAL",
    "CueMatch",
    "Edge",
    "EdgeType",
    "MemoryStore",
    "StoreError",
    "open_store",
]
