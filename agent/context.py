"""Configuration in two parts: the deployment (server side) and a run's choices (any caller).

``Deployment`` names the infrastructure — the store, the Chroma server, the embedding and chat
models, their endpoint and how memories are built — and is read from the process environment
or built by the embedding application's own code.  ``Context`` is the graphs'
``context_schema``: only what any caller may choose (namespace, recipe, budgets, K), clamped
before use.  A served client therefore cannot send the server's API key to an endpoint of its
choosing or open a store at a path of its choosing: those fields are not in the run schema.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal

import platformdirs
from langgraph.runtime import Runtime

from agent.linking import LinkingConfig
from agent.llm import RoleCaller, StructuredOutput
from agent.models import DEFAULT_EMBEDDING, load_chat_model
from agent.recall_config import RECIPES, RecallConfig, RecipeName
from agent.store import MemoryStore, open_store


def default_store_dir() -> str:
    """``$RIPPLEGRAPH_STORE``, else a per-user data directory."""
    return os.environ.get("RIPPLEGRAPH_STORE") or str(
        Path(platformdirs.user_data_dir("ripplegraph")) / "store"
    )


def _env(name: str) -> str | None:
    return os.environ.get(name) or None


@dataclass(frozen=True, kw_only=True)
class Deployment:
    """Infrastructure and memory-building settings: chosen by whoever runs the process.

    ``Deployment()`` reads the environment (what ``langgraph.json``'s ``env`` and the CLI's
    flags set); an application that embeds the graphs may build one in code and hand it over
    with ``Deployment.bind``.  A run's context never carries these values.
    """

    store_dir: str = field(default_factory=default_store_dir)
    """Store directory (Chroma files, graph.sqlite, checkpoints.sqlite) [$RIPPLEGRAPH_STORE]."""
    chroma_url: str | None = field(default_factory=lambda: _env("RIPPLEGRAPH_CHROMA_URL"))
    """Chroma server URL (http://host:port); ``None`` = embedded [$RIPPLEGRAPH_CHROMA_URL]."""
    embedding_model: str = field(
        default_factory=lambda: _env("RIPPLEGRAPH_EMBEDDING") or DEFAULT_EMBEDDING
    )
    """'local:all-MiniLM-L6-v2' or 'openai:<model>' [$RIPPLEGRAPH_EMBEDDING]."""
    model: str | None = field(default_factory=lambda: _env("RIPPLEGRAPH_MODEL"))
    """Chat model of the LLM roles; ``None`` = the offline policies [$RIPPLEGRAPH_MODEL]."""
    base_url: str | None = field(default_factory=lambda: _env("OPENAI_BASE_URL"))
    """OpenAI-compatible endpoint serving ``model`` [$OPENAI_BASE_URL]."""
    routing_model: str | None = field(default_factory=lambda: _env("RIPPLEGRAPH_ROUTING_MODEL"))
    """A cheaper model for the controller and root router [$RIPPLEGRAPH_ROUTING_MODEL]."""
    structured_output: StructuredOutput = "auto"
    """'json_schema', 'json_object', 'prompt' or 'auto' (probe the endpoint once)."""
    llm_attempts: int = 3
    """Attempts per call on rate limits, timeouts and 5xx (1-6)."""
    llm_reasks: int = 1
    """Re-asks after a reply that fails its schema (0-3)."""
    llm_backoff_seconds: float = 0.5
    """First retry wait; doubles per retry (max 8 s)."""
    llm_timeout_seconds: float = 60.0
    """Seconds one model request may take (5-600)."""
    linking: LinkingConfig = field(default_factory=LinkingConfig)
    """How new memories get edges (thresholds depend on the embedding model)."""
    extraction_window: int = 40
    """Turns per LLM extraction window (RippleMem: 40)."""
    extraction_overlap: int = 2
    """Turns shared by consecutive windows, as context."""
    root_batch: int = 20
    """New memories per root-memory consolidation (RootMem: 20)."""
    cluster_threshold: float = 0.55
    """Cosine to a fact cluster's centroid to join it (ActMem τ)."""
    causal_pmi_threshold: float = 0.1
    """Least PMI (nats per effect token) to keep a proposed causal edge."""

    def store(self) -> MemoryStore:
        """The store this deployment names (opened once per process)."""
        return open_store(self.store_dir, self.embedding_model, self.chroma_url or None)

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

    def move(self, store_dir: str | Path) -> Deployment:
        """The same deployment with its store elsewhere (benchmarks, worker processes)."""
        return replace(self, store_dir=str(store_dir))

    def bind(self, **choices: Any) -> Deployed:
        """A run context holding this deployment (for code that embeds the graphs)."""
        return Deployed(deployment=self, **choices)


@dataclass(kw_only=True)
class Context:
    """What a caller may choose for one run: whose memory, which recipe, which budgets."""

    namespace: str = field(
        default="default",
        metadata={
            "description": "Whose memory the chat agent reads and writes (when served with "
            "authentication, the signed-in user's own, whatever this says)."
        },
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
    max_ingest_llm_calls: int = field(
        default=200,
        metadata={
            "description": "LLM calls one ingest batch may make (extraction, roots, causal)."
        },
    )
    max_ingest_tokens: int = field(
        default=600_000, metadata={"description": "LLM tokens one ingest batch may spend."}
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


@dataclass(kw_only=True)
class Deployed(Context):
    """A run's choices with the deployment an application chose in code.

    Only Python code can build one: a served run's context arrives as JSON and becomes a plain
    ``Context``, so its deployment is always the server process's own.
    """

    deployment: Deployment = field(default_factory=Deployment)

    def store(self) -> MemoryStore:
        """The deployment's store."""
        return self.deployment.store()


DEPLOYMENT_FIELDS = frozenset(f.name for f in fields(Deployment))


def resolve_context(value: object) -> Context:
    """A run's ``Context`` from whatever context the caller ran the graph with.

    A parent graph embedding RippleGraph's graphs has its own context type; the choices it
    shares by name (``namespace``, budgets…) carry over and every other one keeps its default.
    A mapping that names a deployment setting is refused: that value is the server's to set.
    """
    if isinstance(value, Context):
        return value
    names = {f.name for f in fields(Context)}
    if isinstance(value, Mapping):
        named = sorted(DEPLOYMENT_FIELDS & set(value))
        if named:
            raise ValueError(
                f"{', '.join(named)}: deployment setting(s), not a run's choice; set them "
                "where the process starts (environment, langgraph.json env, CLI flags, "
                "Deployment in code)"
            )
        shared = {k: v for k, v in value.items() if k in names}
    else:
        shared = {k: getattr(value, k) for k in names if hasattr(value, k)}
    return Context(**{k: v for k, v in shared.items() if v is not None})


def deployment_of(value: object) -> Deployment:
    """The deployment a run uses: one built in code and passed in, else the process's own."""
    chosen = getattr(value, "deployment", None)
    return chosen if isinstance(chosen, Deployment) else Deployment()


def tenant(requested: str, runtime: Runtime[Any]) -> str:
    """Whose memory a run touches: the authenticated user's namespace when served with auth.

    Without an authenticated user (the CLI, embedded use, ``langgraph dev`` without an auth
    handler) the caller is trusted and ``requested`` stands.  With one, the user's
    ``namespace`` (set by ``agent.auth``) or else their identity decides, whatever the run's
    input names.
    """
    info = runtime.server_info
    user = info.user if info is not None else None
    if user is None or not getattr(user, "is_authenticated", True):
        return requested
    try:
        namespace = user["namespace"]
    except (KeyError, TypeError):
        namespace = None
    return str(namespace or user.identity)


@dataclass(frozen=True)
class Scope:
    """What a node works with: the run's choices, the deployment and the tenant."""

    context: Context
    deployment: Deployment
    namespace: str

    def store(self) -> MemoryStore:
        """The deployment's store."""
        return self.deployment.store()

    def caller(self, purpose: Literal["main", "routing"] = "main") -> RoleCaller | None:
        """The deployment's call path (``None`` = offline)."""
        return self.deployment.caller(purpose)


def scope(runtime: Runtime[Any], requested: str) -> Scope:
    """The node's scope: resolved choices, the deployment, the namespace it may touch."""
    return Scope(
        resolve_context(runtime.context),
        deployment_of(runtime.context),
        tenant(requested, runtime),
    )
