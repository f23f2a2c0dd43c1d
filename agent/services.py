"""What a deployment's settings open: the memory store, the model call paths, a node's scope.

The settings (``agent.context``) only describe and never import this module; this is the one
place that turns them into live objects, so a node, the CLI and embedding code all open the
same store and call the model the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ripplegraph.agent.context import Context, Deployment, deployment_of, resolve_context, tenant
from ripplegraph.agent.models.providers import load_chat_model
from ripplegraph.agent.store import MemoryStore, open_store

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

    from ripplegraph.agent.models.llm import RoleCaller

Purpose = Literal["main", "routing"]


@dataclass(frozen=True)
class Services:
    """The store and call paths of one deployment."""

    deployment: Deployment

    def store(self) -> MemoryStore:
        """The deployment's store (opened once per process)."""
        return open_store(**self.deployment.store_options())

    def caller(self, purpose: Purpose = "main") -> RoleCaller | None:
        """The call path for the configured model (``None`` = run the offline policy).

        ``routing`` calls (the controller, the root router) go to the cheaper routing model
        where one is configured.
        """
        llm = self.deployment.llm
        if not llm.model:
            return None
        from ripplegraph.agent.models.llm import RoleCaller  # the offline policies never import it

        name = (llm.routing_model or llm.model) if purpose == "routing" else llm.model
        return RoleCaller(
            load_chat_model(name, llm.base_url, llm.timeout_seconds),
            attempts=llm.attempts,
            reasks=llm.reasks,
            backoff_seconds=llm.backoff_seconds,
            openai_compatible=bool(llm.base_url),
            model_key=f"{name}@{llm.base_url or ''}",
            structured_output=llm.structured_output,
        )


@dataclass(frozen=True)
class Scope:
    """What a node works with: the run's choices, the deployment and the tenant."""

    context: Context
    deployment: Deployment
    namespace: str

    def store(self) -> MemoryStore:
        """The deployment's store."""
        return Services(self.deployment).store()

    def caller(self, purpose: Purpose = "main") -> RoleCaller | None:
        """The deployment's call path (``None`` = offline)."""
        return Services(self.deployment).caller(purpose)


def scope(runtime: Runtime[Any], requested: str) -> Scope:
    """The node's scope: resolved choices, the deployment, the namespace it may touch."""
    return Scope(
        resolve_context(runtime.context),
        deployment_of(runtime.context),
        tenant(requested, runtime),
    )
