"""RippleGraph as an MCP server: ``recall``, ``remember`` and ``forget`` over one namespace.

Claude Desktop, IDE agents and any other MCP client get three tools.  The namespace is fixed
by whoever starts the server (``ripplegraph mcp --namespace NS``); no tool takes one, so a
model can neither read nor write anyone else's memory.  ``recall`` only reads; ``forget`` is
marked destructive, so a client can ask its user before it runs.
"""

from __future__ import annotations

import uuid

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from ripplegraph.agent.items import tuple_of, value_text
from ripplegraph.agent.langgraph_store import RippleGraphStore


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
    def recall(query: str, limit: int = 10) -> Recall:
        """Recall the memories an answer to ``query`` needs, including unstated constraints."""
        items, result = store.recall(namespace, query, wanted=max(1, limit))
        return Recall(
            context=result.context,
            memories=[
                Recalled(
                    id=item.key,
                    memory=str(item.value["recall"]["memory"]),
                    score=round(item.score or 0.0, 4),
                    said=value_text({k: v for k, v in item.value.items() if k != "recall"}),
                )
                for item in items[: max(1, limit)]
            ],
        )

    @server.tool(annotations=ToolAnnotations(destructive_hint=False, open_world_hint=False))
    def remember(text: str) -> str:
        """Remember something the user said; returns the id to forget it by."""
        key = uuid.uuid4().hex
        store.put(labels, key, {"text": text, "speaker": speaker})
        return key

    @server.tool(annotations=ToolAnnotations(destructive_hint=True, open_world_hint=False))
    def forget(memory_id: str) -> str:
        """Forget a memory by id (from ``remember`` or ``recall``), down to the bytes."""
        if store.get(labels, memory_id) is None:
            return f"no memory {memory_id!r}"
        store.delete(labels, memory_id)
        return f"forgot {memory_id!r}"

    return server
