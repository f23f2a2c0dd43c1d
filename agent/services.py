"""What a deployment's settings open: the memory store and the model call paths.

The settings (``agent.context.Deployment``) only describe; this is the one place that turns
them into live objects, so a node, the CLI and embedding code all open the same store and call
the model the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ripplegraph.agent.models import load_chat_model
from ripplegraph.agent.store import MemoryStore, open_store

if TYPE_CHECKING:
    from ripplegraph.agent.context import Deployment
    from ripplegraph.agent.llm import RoleCaller

Purpose = Literal["main", "routing"]


@dataclass(frozen=True)
class Services:
    """The store and call paths of one deployment."""

    deployment: Deployment

    def store(self) -> MemoryStore:
        """The deployment's store (opened once per process)."""
        settings = self.deployment
        return open_store(
            settings.store_dir,
            settings.embedding_model,
            settings.chroma_url or None,
            settings.database_url or None,
            collection_threshold=settings.collection_threshold,
            erasure_window_minutes=settings.erasure_window_minutes,
        )

    def caller(self, purpose: Purpose = "main") -> RoleCaller | None:
        """The call path for the configured model (``None`` = run the offline policy).

        ``routing`` calls (the controller, the root router) go to the cheaper routing model
        where one is configured.
        """
        llm = self.deployment.llm
        if not llm.model:
            return None
        from ripplegraph.agent.llm import RoleCaller  # the offline policies never import it

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
