"""The recall graph inside other people's agents: as a node, behind a wrapper, as a tool."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from ripplegraph.agent.context import Deployed, RecallLimits
from ripplegraph.agent.surfaces.tools import make_recall_tool
from ripplegraph.studio import DEMO_NAMESPACE
from ripplegraph.studio.examples import direct_subgraph, wrapper_node
from tests.conftest import adjusted
from tests.fake_model import ScriptedChatModel

pytestmark = pytest.mark.integration
HARBOR = "Should we go to Harbor Grill for Maya's birthday dinner?"
RECALL_NODES = ("first_hop_recall", "check_sufficiency", "expand_locally", "assemble_evidence")


@pytest.fixture(autouse=True)
def deployment_env(demo_context: Deployed, monkeypatch: pytest.MonkeyPatch) -> None:
    """A parent's context holds run choices only; the deployment comes from the environment."""
    monkeypatch.setenv("RIPPLEGRAPH_STORE", demo_context.deployment.store_dir)
    if demo_context.deployment.chroma_url:
        monkeypatch.setenv("RIPPLEGRAPH_CHROMA_URL", demo_context.deployment.chroma_url)
    if demo_context.deployment.database_url:
        monkeypatch.setenv("RIPPLEGRAPH_DATABASE_URL", demo_context.deployment.database_url)


def test_recall_graph_as_a_node_with_the_parents_own_context(demo_context: Deployed) -> None:
    graph = direct_subgraph.build()
    out = graph.invoke(
        {"query": HARBOR, "namespace": DEMO_NAMESPACE},
        context=direct_subgraph.AssistantContext(recall=RecallLimits(rounds=0)),
    )
    assert any("allergic to seafood" in e.memory.text for e in out["evidence"])
    assert out["draft"].startswith(f"{len(out['evidence'])} memories recalled")
    mermaid = graph.get_graph(xray=True).draw_mermaid()
    assert all(f"recall\\3a{node}" in mermaid for node in RECALL_NODES)


def test_recall_graph_behind_a_wrapper_node(demo_context: Deployed) -> None:
    graph = wrapper_node.build(demo_context.deployment)
    out = graph.invoke(
        {"messages": [HumanMessage(content=HARBOR)], "user_id": DEMO_NAMESPACE},
        context=wrapper_node.SupportContext(recall_rounds=0),
    )
    assert "allergic to seafood" in out["memory_context"]
    assert out["memory_ids"]
    mermaid = graph.get_graph(xray=True).draw_mermaid()
    assert all(f"recall_for_user\\3a{node}" in mermaid for node in RECALL_NODES)


@dataclass
class ShopContext:
    """A tool-calling agent's context, unrelated to RippleGraph's."""

    shop: str = "bakery"


def test_recall_as_a_tool_in_an_agent(demo_context: Deployed) -> None:
    call = {"name": "recall_memory", "args": {"query": HARBOR}, "id": "call-1"}
    model = ScriptedChatModel(
        script=[AIMessage(content="", tool_calls=[call]), AIMessage(content="Not Harbor Grill.")]
    )
    tool = make_recall_tool(namespace=DEMO_NAMESPACE, context=adjusted(demo_context, rounds=0))
    agent = create_agent(model, [tool], context_schema=ShopContext)
    out = agent.invoke({"messages": [HumanMessage(content=HARBOR)]}, context=ShopContext())
    tool_message = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert "allergic to seafood" in tool_message.content
    assert tool_message.artifact["stop_reason"]
    assert any("allergic to seafood" in str(m.content) for m in model.seen[-1])
    assert out["messages"][-1].content == "Not Harbor Grill."
    assert tool.name == "recall_memory" and "query" in tool.args
