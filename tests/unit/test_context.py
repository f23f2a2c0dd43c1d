"""Deployment settings apart from run choices, and the tenant taken from the signed-in user."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import pytest
from langgraph.runtime import Runtime, ServerInfo

from agent.context import (
    DEPLOYMENT_FIELDS,
    Context,
    Deployed,
    Deployment,
    deployment_of,
    resolve_context,
    scope,
    tenant,
)
from agent.graph import chat_graph, ingest_graph, recall_graph

INFRASTRUCTURE = {"store_dir", "chroma_url", "embedding_model", "model", "base_url"}


class User(dict[str, Any]):
    """A user as the LangGraph server hands it over: attributes and keys."""

    @property
    def identity(self) -> str:
        return str(self["identity"])

    @property
    def is_authenticated(self) -> bool:
        return True


def served(user: User | None) -> Runtime[Context]:
    return Runtime(context=Context(), server_info=ServerInfo("a", "recall", user))


def test_no_run_schema_names_infrastructure() -> None:
    assert INFRASTRUCTURE <= DEPLOYMENT_FIELDS
    assert not DEPLOYMENT_FIELDS & {f.name for f in fields(Context)}
    for graph in (chat_graph, recall_graph, ingest_graph):
        assert not DEPLOYMENT_FIELDS & set(graph.get_context_jsonschema()["properties"])


def test_a_mapping_context_naming_infrastructure_is_refused() -> None:
    with pytest.raises(ValueError, match="base_url, model: deployment setting"):
        resolve_context({"model": "gpt-4.1-mini", "base_url": "http://127.0.0.1:9/v1"})
    assert resolve_context({"max_rounds": 2, "persona": "x"}).max_rounds == 2


def test_only_code_can_hand_over_a_deployment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RIPPLEGRAPH_STORE", "/srv/memory")
    chosen = Deployment(store_dir="/app/memory")
    assert deployment_of(chosen.bind(max_rounds=0)).store_dir == "/app/memory"
    assert deployment_of(Deployed(deployment=chosen)) is chosen
    assert deployment_of(Context()).store_dir == "/srv/memory"
    as_json = {"deployment": {"store_dir": "/tmp/evil"}}  # what a served client could send
    assert deployment_of(as_json).store_dir == "/srv/memory"


def test_the_tenant_is_the_signed_in_users_namespace() -> None:
    assert tenant("alice", Runtime(context=Context())) == "alice"
    assert tenant("alice", served(None)) == "alice"
    bob = User(identity="bob-id", namespace="bob")
    assert tenant("alice", served(bob)) == "bob"
    assert tenant("alice", served(User(identity="carol"))) == "carol"
    assert scope(served(bob), "alice").namespace == "bob"
