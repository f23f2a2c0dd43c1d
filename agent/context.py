"""The typed run-time configuration of every RippleGraph graph (LangGraph ``context_schema``).

Every field has a default and a description, so LangGraph Studio renders the context as a
form and a parent graph with its own context type can embed these graphs unchanged.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

from agent.linking import MINILM_SEMANTIC_THRESHOLD, LinkingConfig
from agent.models import DEFAULT_EMBEDDING
from agent.store import MemoryStore, open_store


def default_store_dir() -> str:
    """``$RIPPLEGRAPH_STORE``, else a per-user data directory."""
    return os.environ.get("RIPPLEGRAPH_STORE") or str(
        Path(platformdirs.user_data_dir("ripplegraph")) / "store"
    )


@dataclass(kw_only=True)
class Context:
    """Where memories live and how the write path links them."""

    store_dir: str = field(
        default_factory=default_store_dir,
        metadata={"description": "Store directory (Chroma files and graph.sqlite)."},
    )
    embedding_model: str = field(
        default=DEFAULT_EMBEDDING,
        metadata={"description": "Embeddings: 'local:all-MiniLM-L6-v2' or 'openai:<model>'."},
    )
    chroma_url: str | None = field(
        default=None,
        metadata={"description": "Chroma server URL (http://host:port); empty = embedded."},
    )
    semantic_threshold: float = field(
        default=MINILM_SEMANTIC_THRESHOLD,
        metadata={"description": "Cosine above which two memories get a semantic edge."},
    )
    structural_threshold: float = field(
        default=0.60,
        metadata={"description": "Person/place/time cue similarity for a structural edge."},
    )
    edge_candidates: int = field(
        default=20,
        metadata={"description": "Candidates per channel scored for each new memory's edges."},
    )
    max_edges_per_channel: int = field(
        default=6,
        metadata={"description": "Most edges of each type a memory keeps."},
    )
    time_decay_days: float = field(
        default=7.0,
        metadata={"description": "τ of the time-cue similarity exp(-gap/τ), in days."},
    )

    def store(self) -> MemoryStore:
        """The store this context names (opened once per process)."""
        return open_store(self.store_dir, self.embedding_model, self.chroma_url or None)

    def linking(self) -> LinkingConfig:
        """The edge-building configuration."""
        return LinkingConfig(
            candidates_per_channel=self.edge_candidates,
            max_edges_per_channel=self.max_edges_per_channel,
            semantic_threshold=self.semantic_threshold,
            structural_threshold=self.structural_threshold,
            time_decay_days=self.time_decay_days,
        )
