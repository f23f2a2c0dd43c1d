"""Deployment settings apart from run choices, and the tenant taken from the signed-in user."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from langgraph.runtime import Runtime, ServerInfo
from pydantic import ValidationError

from ripplegraph.agent.context import (
    DEPLOYMENT_FIELDS,
    Context,
    Deployed,
    Deployment,
    RecallLimits,
    deployment_of,
    resolve_context,
    tenant,
)
from ripplegraph.agent.graph import chat_graph, ingest_graph, recall_graph
from ripplegraph.agent.services import scope

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
    assert not DEPLOYMENT_FIELDS & set(Context.model_fields)
    for graph in (chat_graph, recall_graph, ingest_graph):
        assert not DEPLOYMENT_FIELDS & set(graph.get_context_jsonschema()["properties"])


def test_a_mapping_context_naming_infrastructure_is_refused() -> None:
    with pytest.raises(ValueError, match="base_url, model: deployment setting"):
        resolve_context({"model": "gpt-4.1-mini", "base_url": "http://127.0.0.1:9/v1"})
    assert resolve_context({"recall": {"rounds": 2}, "persona": "x"}).recall.rounds == 2


def test_only_code_can_hand_over_a_deployment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RIPPLEGRAPH_STORE", "/srv/memory")
    chosen = Deployment(store_dir="/app/memory")
    assert deployment_of(chosen.bind(recall={"rounds": 0})).store_dir == "/app/memory"
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


def described(schema: dict[str, Any]) -> list[str]:
    """Every property of the schema and of its groups that has no description."""
    missing = [name for name, f in schema["properties"].items() if not f.get("description")]
    for group in schema.get("$defs", {}).values():
        missing += [n for n, f in group["properties"].items() if not f.get("description")]
    return missing


def test_every_run_choice_is_described_in_its_group() -> None:
    for graph in (chat_graph, recall_graph, ingest_graph):
        schema = graph.get_context_jsonschema()
        assert set(schema["properties"]) == {
            "namespace",
            "user_name",
            "recall_recipe",
            "recall",
            "llm_budget",
            "ingest_budget",
        }
        assert described(schema) == []
        assert set(schema["$defs"]) == {"RecallLimits", "RunBudget", "IngestBudget"}


def test_numbers_are_brought_into_range_once_when_the_context_is_built() -> None:
    wild = Context.model_validate(
        {
            "recall": {"rounds": 10**9, "hops": -5, "refinements": 99, "evidence_k": 0},
            "llm_budget": {"calls": -1, "tokens": 10**12},
            "ingest_budget": {"calls": 10**9, "tokens": -7},
        }
    )
    assert wild.recall.model_dump() == {
        "rounds": 3,
        "hops": 1,
        "refinements": 2,
        "evidence_k": 1,
        "context_tokens": 3000,
    }
    assert (wild.llm_budget.calls, wild.llm_budget.tokens) == (0, 200_000)
    assert (wild.ingest_budget.calls, wild.ingest_budget.tokens) == (10_000, 0)
    assert wild.limits()["hops"] == 1 and wild.limits()["llm_calls"] == 0


def test_the_model_call_path_settings_are_clamped_too() -> None:
    settings = Deployment(llm={"attempts": 99, "reasks": -1, "timeout_seconds": 1.0}).llm
    assert (settings.attempts, settings.reasks, settings.timeout_seconds) == (6, 0, 5.0)


def test_a_parent_graphs_context_shares_the_groups_it_names() -> None:
    @dataclass
    class Parent:
        recall: RecallLimits
        persona: str = "concise"

    shared = resolve_context(Parent(recall=RecallLimits(rounds=0)))
    assert shared.recall.rounds == 0 and shared.namespace == "default"


def test_a_dict_context_naming_a_deployment_setting_or_a_typo_is_refused_by_name() -> None:
    query = {"query": "allergy?", "namespace": "demo"}
    for context, named in (
        ({"model": "gpt-4.1-mini"}, "model"),
        ({"recall": {"round": 2}}, "round"),
    ):
        with pytest.raises(ValidationError, match=named):
            recall_graph.invoke(query, context=context)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="model"):
        Deployment(model="gpt-4.1-mini")  # type: ignore[call-arg]
