"""RippleGraph as an MCP server: ``recall``, ``remember`` and ``forget`` over one namespace.

Claude Desktop, IDE agents and any other MCP client get three tools.  The namespace is fixed
by whoever starts the server (``ripplegraph mcp --namespace NS``); no tool takes one, so a
model can neither read nor write anyone else's memory.  ``recall`` only reads; ``forget`` is
marked destructive, so a client can ask its user before it runs.

A refused call (an empty or overlong query or text, an unknown id) answers the client with
the refusal's own sentence; any other failure stays in the server's log.  Over HTTP
(``http_app``) the server sits behind ``agent.access``'s gate: Host and Origin checked, and
a bearer token required when one is set (always, off loopback).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Annotated, ParamSpec, TypeVar

from langgraph.store.base import PutOp
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field
from starlette.types import ASGIApp

from ripplegraph.agent.errors import RippleGraphError
from ripplegraph.agent.memory.items import checked_query, tuple_of, value_text
from ripplegraph.agent.surfaces.access import Gate, Guarded
from ripplegraph.agent.surfaces.langgraph_store import RippleGraphStore, add_said

MAX_RECALLED = 100
"""The most memories one ``recall`` returns."""
_P = ParamSpec("_P")
_R = TypeVar("_R")


def _refusals_said(tool: Callable[_P, _R]) -> Callable[_P, _R]:
    """A tool whose refusals (``RippleGraphError``) reach the client in their own words."""

    @wraps(tool)
    def said(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return tool(*args, **kwargs)
        except RippleGraphError as error:
            raise ToolError(str(error)) from error

    return said


class Recalled(BaseModel):
    """One memory a recall returned."""

    id: str = Field(description="The id to forget it by.")
    memory: str = Field(description="What was remembered.")
    score: float = Field(description="Its evidence score ρ for the query.")
    said: str = Field(description="The item it came from, as it was added.")


class Recall(BaseModel):
    """What a recall found: the memories, best first, and the evidence rendered for a prompt."""

    context: str
    memories: list[Recalled]


def build_server(store: RippleGraphStore, namespace: str, *, speaker: str = "User") -> MCPServer:
    """The MCP server over ``namespace`` of ``store``; ``remember`` stores ``speaker``'s words."""
    labels = tuple_of(namespace)
    server = MCPServer(
        "ripplegraph",
        instructions=(
            "Long-term memory of one user. Call recall before answering anything that may "
            "depend on what they said before (plans, preferences, health, constraints); call "
            "remember when they tell you something worth keeping; forget only when asked."
        ),
    )

    @server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
    @_refusals_said
    def recall(query: str, limit: Annotated[int, Field(ge=1, le=MAX_RECALLED)] = 10) -> Recall:
        """Recall the memories an answer to ``query`` needs, including unstated constraints."""
        items, result = store.recall(namespace, checked_query(query), wanted=limit)
        return Recall(
            context=result.context,
            memories=[
                Recalled(
                    id=item.key,
                    memory=str(item.value["recall"]["memory"]),
                    score=round(item.score or 0.0, 4),
                    said=value_text({k: v for k, v in item.value.items() if k != "recall"}),
                )
                for item in items[:limit]
            ],
        )

    @server.tool(annotations=ToolAnnotations(destructive_hint=False, open_world_hint=False))
    @_refusals_said
    def remember(text: str) -> str:
        """Remember something the user said; returns the id to forget it by."""
        return add_said(store, namespace, text, speaker=speaker)

    @server.tool(annotations=ToolAnnotations(destructive_hint=True, open_world_hint=False))
    @_refusals_said
    def forget(memory_id: Annotated[str, Field(min_length=1, max_length=200)]) -> str:
        """Forget a memory by id (from ``remember`` or ``recall``), down to the bytes."""
        if store.get_named(labels, memory_id) is None:
            raise ToolError(f"no memory {memory_id!r} in this memory: nothing was forgotten")
        store.run([PutOp(labels, memory_id, None)])
        return f"forgot {memory_id!r}"

    return server


def http_app(
    server: MCPServer, *, host: str, token: str | None, public_url: str | None = None
) -> ASGIApp:
    """``server`` over streamable HTTP at ``/mcp``, behind the surface rule of ``agent.access``.

    The gate checks Host and Origin for every request (the SDK's own check, which it turns
    on only for loopback hosts, is replaced by it) and, with ``token``, the bearer token;
    ``public_url`` is where a reverse proxy serves it.
    """
    app = server.streamable_http_app(
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        host=host,
    )
    return Guarded(app, Gate(host=host, token=token, public_url=public_url))
