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
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from ripplegraph.agent.decisions.linking import LinkingConfig
from ripplegraph.agent.memory.items import labels_of, namespace_named
from ripplegraph.agent.models.providers import DEFAULT_EMBEDDING
from ripplegraph.agent.paths import default_store_dir
from ripplegraph.agent.recall_config import RECIPES, RecallConfig, RecipeName
from ripplegraph.agent.spend import Spend
from ripplegraph.agent.store import MemoryStore, open_store
from ripplegraph.agent.store.memory_store import COLLECTION_THRESHOLD, ERASURE_WINDOW_MINUTES
from ripplegraph.prompts.role import StructuredOutput

if TYPE_CHECKING:  # the settings describe; running a graph or a model imports these
    from langgraph.runtime import Runtime


def _env(name: str) -> str | None:
    return os.environ.get(name) or None


def _env_number(name: str, default: float) -> float:
    value = _env(name)
    return float(value) if value is not None else default


def _named(name: str) -> str:
    """A namespace name, once every surface could hold it (``agent.memory.items``)."""
    return "/".join(labels_of(name))


def _clamped(low: float, high: float) -> AfterValidator:
    """Bring a number into ``[low, high]`` once, when the settings are built."""
    return AfterValidator(lambda value: min(max(value, low), high))


# --- deployment ------------------------------------------------------------------------------


class ModelSettings(BaseModel):
    """The chat model behind the LLM roles and how each call to it is made."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str | None = Field(
        default_factory=lambda: _env("RIPPLEGRAPH_MODEL"),
        description="Chat model of the LLM roles; None = the offline policies "
        "[$RIPPLEGRAPH_MODEL].",
    )
    base_url: str | None = Field(
        default_factory=lambda: _env("OPENAI_BASE_URL"),
        description="OpenAI-compatible endpoint serving the model [$OPENAI_BASE_URL].",
    )
    routing_model: str | None = Field(
        default_factory=lambda: _env("RIPPLEGRAPH_ROUTING_MODEL"),
        description="A cheaper model for the controller and root router "
        "[$RIPPLEGRAPH_ROUTING_MODEL].",
    )
    structured_output: StructuredOutput = Field(
        default="auto",
        description="'json_schema', 'json_object', 'prompt' or 'auto' (probe the endpoint once).",
    )
    attempts: Annotated[int, _clamped(1, 6)] = Field(
        default=3, description="Attempts per call on rate limits, timeouts and 5xx (1-6)."
    )
    reasks: Annotated[int, _clamped(0, 3)] = Field(
        default=1, description="Re-asks after a reply that fails its schema (0-3)."
    )
    backoff_seconds: Annotated[float, _clamped(0.0, 8.0)] = Field(
        default=0.5, description="First retry wait; doubles per retry (0-8 s)."
    )
    timeout_seconds: Annotated[float, _clamped(5.0, 600.0)] = Field(
        default=60.0, description="Seconds one model request may take (5-600)."
    )


class BuildSettings(BaseModel):
    """How memories are built from what was said: windows, edges, roots, clusters, causes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    linking: LinkingConfig = Field(
        default_factory=LinkingConfig,
        description="How new memories get edges (thresholds depend on the embedding model).",
    )
    extraction_window: int = Field(
        default=40, description="Turns per LLM extraction window (RippleMem: 40)."
    )
    extraction_overlap: int = Field(
        default=2, description="Turns shared by consecutive windows, as context."
    )
    root_batch: int = Field(
        default=20, description="New memories per root-memory consolidation (RootMem: 20)."
    )
    cluster_threshold: float = Field(
        default=0.55, description="Cosine to a fact cluster's centroid to join it (ActMem τ)."
    )
    causal_pmi_threshold: float = Field(
        default=0.1, description="Least PMI (nats per effect token) to keep a causal edge."
    )


class Deployment(BaseModel):
    """Infrastructure and memory-building settings: chosen by whoever runs the process.

    ``Deployment()`` reads the environment (what ``langgraph.json``'s ``env`` and the CLI's
    flags set); an application that embeds the graphs may build one in code and hand it over
    with ``Deployment.bind``.  A run's context never carries these values.  What they open —
    the store, the model call path — ``agent.services`` builds.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    store_dir: str = Field(
        default_factory=default_store_dir,
        description="Store directory (Chroma files, graph.sqlite, checkpoints.sqlite) "
        "[$RIPPLEGRAPH_STORE].",
    )
    chroma_url: str | None = Field(
        default_factory=lambda: _env("RIPPLEGRAPH_CHROMA_URL"),
        description="Chroma server URL (http://host:port); None = embedded "
        "[$RIPPLEGRAPH_CHROMA_URL].",
    )
    database_url: str | None = Field(
        default_factory=lambda: _env("RIPPLEGRAPH_DATABASE_URL"),
        description="PostgreSQL URL (postgresql://…) for units, edges and roots; None = "
        "graph.sqlite in the store directory [$RIPPLEGRAPH_DATABASE_URL].",
    )
    collection_threshold: Annotated[int, _clamped(0, 10_000_000)] = Field(
        default_factory=lambda: int(
            _env_number("RIPPLEGRAPH_COLLECTION_THRESHOLD", COLLECTION_THRESHOLD)
        ),
        description="Memories a namespace keeps as rows beside its units before it gets a "
        "Chroma collection of its own; 0 = a collection for every namespace.  Chosen when a "
        "store is made; the store keeps it [$RIPPLEGRAPH_COLLECTION_THRESHOLD].",
    )
    erasure_window_minutes: Annotated[float, _clamped(0.0, 1440.0)] = Field(
        default_factory=lambda: _env_number("RIPPLEGRAPH_ERASURE_WINDOW", ERASURE_WINDOW_MINUTES),
        description="Most minutes between a forget and the compaction that removes what it "
        "left in Chroma's or PostgreSQL's files (0-1440) [$RIPPLEGRAPH_ERASURE_WINDOW].",
    )
    embedding_model: str = Field(
        default_factory=lambda: _env("RIPPLEGRAPH_EMBEDDING") or DEFAULT_EMBEDDING,
        description="'local:all-MiniLM-L6-v2' or 'openai:<model>' [$RIPPLEGRAPH_EMBEDDING].",
    )
    llm: ModelSettings = Field(
        default_factory=ModelSettings, description="The chat model and its call path."
    )
    building: BuildSettings = Field(
        default_factory=BuildSettings, description="How memories are built on ingest."
    )

    def move(self, store_dir: str | Path) -> Deployment:
        """The same deployment with its store elsewhere (benchmarks, worker processes)."""
        return self.model_copy(update={"store_dir": str(store_dir)})

    def bind(self, **choices: Any) -> Deployed:
        """A run context holding this deployment (for code that embeds the graphs)."""
        return Deployed(deployment=self, **choices)

    def store_options(self) -> dict[str, Any]:
        """Where the store lives and how it is laid out, as ``open_store`` takes them."""
        return {
            "directory": self.store_dir,
            "embeddings": self.embedding_model,
            "chroma_url": self.chroma_url or None,
            "database_url": self.database_url or None,
            "collection_threshold": self.collection_threshold,
            "erasure_window_minutes": self.erasure_window_minutes,
        }


# --- a run's choices -------------------------------------------------------------------------


class RecallLimits(BaseModel):
    """How far one recall may go and how much evidence it returns."""

    model_config = ConfigDict(extra="forbid")

    rounds: Annotated[int, _clamped(0, 3)] = Field(
        default=2, description="Extra recollection rounds R after the first hop (0-3)."
    )
    hops: Annotated[int, _clamped(1, 3)] = Field(
        default=2, description="Hops h from the anchors per expansion round (1-3)."
    )
    refinements: Annotated[int, _clamped(0, 2)] = Field(
        default=1, description="Counterfactual refinements per query (0-2)."
    )
    evidence_k: Annotated[int, _clamped(1, 200)] = Field(
        default=30, description="K: most memories in the assembled evidence (1-200)."
    )
    context_tokens: Annotated[int, _clamped(200, 100_000)] = Field(
        default=3000, description="Token budget of the rendered evidence context (200-100000)."
    )


class _LLMBudget(BaseModel):
    """Calls and tokens the LLM roles may spend."""

    model_config = ConfigDict(extra="forbid")

    calls: int
    tokens: int

    @property
    def limit(self) -> Spend:
        """The budget as a spend limit."""
        return Spend(self.calls, self.tokens)


class RunBudget(_LLMBudget):
    """What the LLM roles may spend in one recall, or one chat turn with its answer."""

    calls: Annotated[int, _clamped(0, 20)] = Field(
        default=6,
        description="LLM calls (retries and re-asks count; offline uses none) (0-20).",
    )
    tokens: Annotated[int, _clamped(0, 200_000)] = Field(
        default=16_000, description="LLM tokens, prompt + reply (0-200000)."
    )


class IngestBudget(_LLMBudget):
    """What the LLM roles may spend on one ingest batch (extraction, roots, causal links)."""

    calls: Annotated[int, _clamped(0, 10_000)] = Field(
        default=200, description="LLM calls one ingest batch may make (0-10000)."
    )
    tokens: Annotated[int, _clamped(0, 50_000_000)] = Field(
        default=600_000, description="LLM tokens one ingest batch may spend (0-50000000)."
    )


class Context(BaseModel):
    """What a caller may choose for one run: whose memory, which recipe, which budgets.

    Every number is brought into its range once, when the context is built, whatever the
    caller asked for.  A name that is not a run choice (a deployment setting, a typo) is
    refused with an error that names it.
    """

    model_config = ConfigDict(extra="forbid")

    namespace: Annotated[str, AfterValidator(_named)] = Field(
        default="default",
        description="Whose memory the chat agent reads and writes, by name as every surface "
        "names it (when served with authentication, the signed-in user's own, whatever this "
        "says).",
    )
    user_name: str = Field(
        default="User", description="Speaker name the chat agent stores the user's turns under."
    )
    recall_recipe: RecipeName = Field(
        default="full", description="Named retrieval configuration (agent/recall_config.py)."
    )
    recall: RecallLimits = Field(
        default_factory=RecallLimits,
        description="Rounds, hops, refinements and the evidence budget of one recall.",
    )
    llm_budget: RunBudget = Field(
        default_factory=RunBudget,
        description="What the LLM roles may spend per recall or chat turn.",
    )
    ingest_budget: IngestBudget = Field(
        default_factory=IngestBudget,
        description="What the LLM roles may spend per ingest batch.",
    )

    def recall_config(self) -> RecallConfig:
        """The named retrieval recipe."""
        return RECIPES[self.recall_recipe]

    def limits(self) -> dict[str, int]:
        """Every limit of one recall by its counter's name (what ``Budget.limits`` records)."""
        return {
            **self.recall.model_dump(),
            **self.llm_budget.limit.counters(),
        }


class Deployed(Context):
    """A run's choices with the deployment an application chose in code.

    Only Python code can build one: a served run's context arrives as JSON and becomes a plain
    ``Context``, so its deployment is always the server process's own.
    """

    deployment: Deployment = Field(default_factory=Deployment)
    recall_settings: RecallConfig | None = Field(
        default=None,
        description="Retrieval settings in place of the named recipe's: code that embeds "
        "RippleGraph may tune them (the folds bench does); a served caller names a recipe.",
    )

    def recall_config(self) -> RecallConfig:
        """The settings code chose, else the named recipe."""
        return self.recall_settings or super().recall_config()

    def store(self) -> MemoryStore:
        """Deprecated (goes in 0.2): the services open a deployment's store.

        ``Services(context.deployment).store()`` opens the same store; this method, which the
        settings had before the services took over opening, still returns it.
        """
        warnings.warn(
            "Deployed.store() is deprecated: use "
            "ripplegraph.agent.services.Services(context.deployment).store()",
            DeprecationWarning,
            stacklevel=2,
        )
        return open_store(**self.deployment.store_options())


def _names(model: type[BaseModel]) -> frozenset[str]:
    """A settings model's field names and those of its groups."""
    names = set(model.model_fields)
    for info in model.model_fields.values():
        group = info.annotation
        if isinstance(group, type) and issubclass(group, BaseModel):
            names |= _names(group)
    return frozenset(names)


DEPLOYMENT_FIELDS = _names(Deployment)
"""Every deployment setting's name, its groups' included."""


def resolve_context(value: object) -> Context:
    """A run's ``Context`` from whatever context the caller ran the graph with.

    A parent graph embedding RippleGraph's graphs has its own context type; the choices it
    shares by name (``namespace``, the budget groups…) carry over and every other one keeps its
    default.  A mapping that names a deployment setting is refused: that value is the server's.
    """
    if isinstance(value, Context):
        return value
    names = set(Context.model_fields)
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
    return Context.model_validate({k: v for k, v in shared.items() if v is not None})


def deployment_of(value: object) -> Deployment:
    """The deployment a run uses: one built in code and passed in, else the process's own."""
    chosen = getattr(value, "deployment", None)
    return chosen if isinstance(chosen, Deployment) else Deployment()


def tenant(requested: str, runtime: Runtime[Any]) -> str:
    """Whose memory a run touches: the authenticated user's namespace when served with auth.

    Without an authenticated user (the CLI, embedded use, ``langgraph dev`` without an auth
    handler) the caller is trusted and ``requested`` stands.  With one, the user's
    ``namespace`` (set by ``agent.surfaces.auth``) or else their identity decides, whatever
    the run's input names.
    """
    info = runtime.server_info
    user = info.user if info is not None else None
    if user is None or not getattr(user, "is_authenticated", True):
        return requested
    try:
        namespace = user["namespace"]
    except (KeyError, TypeError):
        namespace = None
    return str(namespace) if namespace else namespace_named(user.identity)
