"""Recall and forgetting as LangChain tools, for tool-calling agents and ``ToolNode``."""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool, StructuredTool

from ripplegraph.agent.context import Context, deployment_of
from ripplegraph.agent.graph import recall_graph
from ripplegraph.agent.memory.items import namespace_named
from ripplegraph.agent.services import Services
from ripplegraph.agent.state import RecallInput, RecallOutput

_DESCRIPTION = (
    "Recall long-term memory: returns the evidence (with provenance) that answering the query "
    "needs, including constraints the query does not mention. Ask a full question."
)


def make_recall_tool(
    namespace: str | None = None,
    context: Context | None = None,
    *,
    name: str = "recall_memory",
    description: str = _DESCRIPTION,
) -> BaseTool:
    """A tool that runs the recall graph; content = the rendered evidence, artifact = the output.

    ``namespace`` (a name, as every surface takes one) defaults to the context's; the model
    only chooses the query, never whose memory is read.
    """
    run_context = context or Context()
    tenant = namespace_named(namespace or run_context.namespace)

    def recall_memory(query: str) -> tuple[str, dict[str, Any]]:
        raw = recall_graph.invoke(RecallInput(query=query, namespace=tenant), context=run_context)
        result = RecallOutput.model_validate(raw)
        return result.context, result.model_dump(mode="json", exclude={"trace"})

    return StructuredTool.from_function(
        func=recall_memory,
        name=name,
        description=description,
        response_format="content_and_artifact",
    )


_FORGET_DESCRIPTION = (
    "Forget long-term memories for good when the user asks: give memory ids (from recall "
    "evidence), or a session id, or a person's name. Returns how many memories were forgotten."
)


def make_forget_tool(
    namespace: str | None = None,
    context: Context | None = None,
    *,
    name: str = "forget_memory",
    description: str = _FORGET_DESCRIPTION,
) -> BaseTool:
    """A tool that forgets memories by id, session or person in one fixed namespace.

    As with recall, the model never chooses whose memory is touched, and it cannot wipe a
    whole namespace: that stays an explicit operator action (``ripplegraph forget --all``).
    """
    run_context = context or Context()
    tenant = namespace_named(namespace or run_context.namespace)

    def forget_memory(
        memory_ids: list[str] | None = None, session: str | None = None, person: str | None = None
    ) -> tuple[str, dict[str, Any]]:
        forgotten = (
            Services(deployment_of(run_context))
            .store()
            .forget(tenant, memory_ids=memory_ids or (), session=session, person=person)
        )
        return f"Forgot {len(forgotten)} memories.", {"forgotten": forgotten}

    return StructuredTool.from_function(
        func=forget_memory,
        name=name,
        description=description,
        response_format="content_and_artifact",
    )
