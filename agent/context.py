"""The typed run-time configuration of every RippleGraph graph (LangGraph ``context_schema``).

Every field has a default and a description, so LangGraph Studio renders the context as a
form and a parent graph with its own context type can embed these graphs unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Literal

import platformdirs

from agent.linking import MINILM_SEMANTIC_THRESHOLD, LinkingConfig
from agent.llm import RoleCaller, StructuredOutput
from agent.models import DEFAULT_EMBEDDING, load_chat_model
from agent.recall_config import RECIPES, RecallConfig, RecipeName
from agent.store import MemoryStore, open_store


def default_store_dir() -> str:
    """``$RIPPLEGRAPH_STORE``, else a per-user data directory."""
    return os.environ.get("RIPPLEGRAPH_STORE") or str(
        Path(platformdirs.user_data_dir("ripplegraph")) / "store"
    )


@dataclass(kw_only=True)
class Context:
    """Where memories live, how they are linked, how recall searches, and its budgets."""

    store_dir: str = field(
        default_factory=default_store_dir,
        metadata={"description": "Store directory (Chroma files and graph.sqlite)."},
    )
    embedding_model: str = field(
        default=DEFAULT_EMBEDDING,
        metadata={"description": "Embeddings: 'local:all-MiniLM-L6-v2' or 'openai:<model>'."},
    )
    chroma_url: str | None = field(
        default_factory=lambda: os.environ.get("RIPPLEGRAPH_CHROMA_URL") or None,
        metadata={
            "description": "Chroma server URL (http://host:port); empty = embedded "
            "[default: $RIPPLEGRAPH_CHROMA_URL]."
        },
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

    namespace: str = field(
        default="default",
        metadata={"description": "Whose memory the chat agent reads and writes."},
    )
    user_name: str = field(
        default="User",
        metadata={"description": "Speaker name the chat agent stores the user's turns under."},
    )
    recall_recipe: RecipeName = field(
        default="full",
        metadata={"description": "Named retrieval configuration (agent/recall_config.py)."},
    )
    max_rounds: int = field(
        default=1,
        metadata={"description": "Extra recollection rounds R after the first hop (0-3)."},
    )
    max_hops: int = field(
        default=2, metadata={"description": "Hops h from the anchors per expansion round (1-3)."}
    )
    max_refinements: int = field(
        default=1, metadata={"description": "Counterfactual refinements per query (0-2)."}
    )
    max_llm_calls: int = field(
        default=6,
        metadata={
            "description": "LLM calls one recall (or chat turn, answer included) may make; "
            "retries and re-asks count (offline uses 0)."
        },
    )
    max_tokens: int = field(
        default=16000,
        metadata={"description": "LLM tokens (prompt + reply) one recall or chat turn may spend."},
    )
    evidence_k: int = field(
        default=30, metadata={"description": "K: most memories in the assembled evidence."}
    )
    context_tokens: int = field(
        default=3000, metadata={"description": "Token budget of the rendered evidence context."}
    )

    model: str | None = field(
        default_factory=lambda: os.environ.get("RIPPLEGRAPH_MODEL") or None,
        metadata={
            "description": "Chat model for the LLM roles: an init_chat_model string "
            "('openai:gpt-4.1-mini') or, with base_url, the endpoint's model name; empty = the "
            "offline policies [default: $RIPPLEGRAPH_MODEL]."
        },
    )
    base_url: str | None = field(
        default_factory=lambda: os.environ.get("OPENAI_BASE_URL") or None,
        metadata={
            "description": "OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp server) serving "
            "the model [default: $OPENAI_BASE_URL]."
        },
    )
    routing_model: str | None = field(
        default=None,
        metadata={
            "description": "A cheaper model for the controller and root router (same "
            "endpoint); empty = the main model."
        },
    )
    llm_attempts: int = field(
        default=3,
        metadata={"description": "Attempts per call on rate limits, timeouts and 5xx (1-6)."},
    )
    llm_reasks: int = field(
        default=1, metadata={"description": "Re-asks after a reply that fails its schema (0-3)."}
    )
    llm_backoff_seconds: float = field(
        default=0.5, metadata={"description": "First retry wait; doubles per retry (max 8 s)."}
    )
    llm_timeout_seconds: float = field(
        default=60.0, metadata={"description": "Seconds one model request may take (5-600)."}
    )
    structured_output: StructuredOutput = field(
        default="auto",
        metadata={
            "description": "How replies are held to each role's schema: 'json_schema' (OpenAI, "
            "vLLM, llama-server), 'json_object' (llama-cpp-python's server), 'prompt' (JSON "
            "asked for in the prompt only), or 'auto' (probe the endpoint once)."
        },
    )
    max_ingest_llm_calls: int = field(
        default=200,
        metadata={
            "description": "LLM calls one ingest batch may make (extraction, roots, causal)."
        },
    )
    max_ingest_tokens: int = field(
        default=600_000, metadata={"description": "LLM tokens one ingest batch may spend."}
    )
    extraction_window: int = field(
        default=40, metadata={"description": "Turns per LLM extraction window (RippleMem: 40)."}
    )
    extraction_overlap: int = field(
        default=2, metadata={"description": "Turns shared by consecutive windows, as context."}
    )
    root_batch: int = field(
        default=20,
        metadata={"description": "New memories per root-memory consolidation (RootMem: 20)."},
    )
    cluster_threshold: float = field(
        default=0.55,
        metadata={"description": "Cosine to a fact cluster's centroid to join it (ActMem τ)."},
    )
    causal_pmi_threshold: float = field(
        default=0.1,
        metadata={
            "description": "Least PMI (nats per effect token) to keep a proposed causal edge."
        },
    )

    def caller(self, purpose: Literal["main", "routing"] = "main") -> RoleCaller | None:
        """The call path for the configured model (``None`` = run the offline policy)."""
        if not self.model:
            return None
        name = (self.routing_model or self.model) if purpose == "routing" else self.model
        timeout = min(max(self.llm_timeout_seconds, 5.0), 600.0)
        return RoleCaller(
            load_chat_model(name, self.base_url, timeout),
            attempts=min(max(self.llm_attempts, 1), 6),
            reasks=min(max(self.llm_reasks, 0), 3),
            backoff_seconds=min(max(self.llm_backoff_seconds, 0.0), 8.0),
            openai_compatible=bool(self.base_url),
            model_key=f"{name}@{self.base_url or ''}",
            structured_output=self.structured_output,
        )

    def ingest_limits(self) -> dict[str, int]:
        """The write path's LLM budget, clamped."""
        return {
            "llm_calls": min(max(self.max_ingest_llm_calls, 0), 10_000),
            "tokens": min(max(self.max_ingest_tokens, 0), 50_000_000),
        }

    def recall_config(self) -> RecallConfig:
        """The named retrieval recipe."""
        return RECIPES[self.recall_recipe]

    def limits(self) -> dict[str, int]:
        """Budget limits, clamped to sane ranges whatever the caller asked for."""
        return {
            "rounds": min(max(self.max_rounds, 0), 3),
            "hops": min(max(self.max_hops, 1), 3),
            "refinements": min(max(self.max_refinements, 0), 2),
            "llm_calls": min(max(self.max_llm_calls, 0), 20),
            "tokens": min(max(self.max_tokens, 0), 200_000),
            "evidence_k": min(max(self.evidence_k, 1), 200),
            "context_tokens": min(max(self.context_tokens, 200), 100_000),
        }

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


def resolve_context(value: object) -> Context:
    """Our ``Context`` from whatever context the caller ran the graph with.

    A parent graph embedding RippleGraph's graphs has its own context type; fields it shares
    by name (``store_dir``, ``namespace``, budgets…) carry over, every other field keeps its
    default, so the subgraph never depends on the parent's context type.
    """
    if isinstance(value, Context):
        return value
    names = {f.name for f in fields(Context)}
    if isinstance(value, Mapping):
        shared = {k: v for k, v in value.items() if k in names}
    else:
        shared = {k: getattr(value, k) for k in names if hasattr(value, k)}
    return Context(**{k: v for k, v in shared.items() if v is not None})
