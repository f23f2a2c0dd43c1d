"""Storage: Chroma for vectors, SQLite for cues and edges, BM25 for words; all by namespace."""

from agent.store.cue_index import CueMatch
from agent.store.memory_store import MemoryStore, StoreError, open_store
from agent.store.relational import Edge

__all__ = ["CueMatch", "Edge", "MemoryStore", "StoreError", "open_store"]
