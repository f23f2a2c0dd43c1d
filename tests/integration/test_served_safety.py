"""Served with authentication: attacks from clients against a real ``langgraph dev``.

One server (``langgraph.served.json``) holds two users' memories, a deployment model endpoint
and an API key.  Clients driven by ``langgraph-sdk`` try to send the key elsewhere, open a
store of their choosing, read the other user's memories and threads.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient

from ripplegraph.agent.context import Deployed
from ripplegraph.agent.services import Services
from ripplegraph.agent.state import RecallOutput
from ripplegraph.agent.surfaces import auth
from tests.conftest import deployed
from tests.integration.conftest import ingest
from tests.langgraph_server import langgraph_dev
from tests.openai_server import Reply, ScriptedOpenAI
from tests.tenants import secret, tenant_sessions

pytestmark = pytest.mark.integration
CANARY = "sk-canary-4f1d9c0b7e"
LOCKER = "What is Maya's locker combination?"


@dataclass
class Served:
    url: str
    tokens: dict[str, str]
    context: Deployed
    endpoint: ScriptedOpenAI  # the deployment's model endpoint
    listener: ScriptedOpenAI  # what a client would like the key sent to

    def client(self, user: str | None) -> SyncLangGraphClient:
        headers = {"Authorization": f"Bearer {self.tokens[user]}"} if user else {}
        return get_sync_client(url=self.url, headers=headers)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("served")
    context = deployed(store_dir=str(root / "store"))
    ingest(context, "alice", tenant_sessions(0))
    ingest(context, "bob", tenant_sessions(1))
    users = root / "users.json"
    tokens = {name: auth.add_user(users, name) for name in ("alice", "bob")}
    endpoint = ScriptedOpenAI(lambda request: Reply(status=400, error="not scripted"))
    listener = ScriptedOpenAI(lambda request: Reply(status=400, error="not scripted"))
    env = {
        "RIPPLEGRAPH_STORE": str(root / "store"),
        "RIPPLEGRAPH_USERS": str(users),
        "RIPPLEGRAPH_MODEL": "deployment-model",
        "OPENAI_BASE_URL": endpoint.url,
        "OPENAI_API_KEY": CANARY,
    }
    try:
        with langgraph_dev("langgraph.served.json", env, root / "server.log") as url:
            yield Served(url, tokens, context, endpoint, listener)
    finally:
        endpoint.close()
        listener.close()


def recall(served: Served, user: str, namespace: str, **context: Any) -> RecallOutput:
    out = served.client(user).runs.wait(
        None,
        "recall",
        input={"query": LOCKER, "namespace": namespace},
        context={"namespace": namespace, **context},
    )
    assert isinstance(out, dict) and "__error__" not in out, out
    return RecallOutput.model_validate(out)


def test_requests_without_a_valid_token_are_refused(served: Served) -> None:
    for headers in ({}, {"Authorization": "Bearer rg_not-a-token"}, {"Authorization": "x"}):
        response = httpx.post(f"{served.url}/assistants/search", json={}, headers=headers)
        assert response.status_code == 401
    assert served.client("alice").assistants.search()


def test_a_client_cannot_send_the_server_key_elsewhere(served: Served) -> None:
    before = len(served.endpoint.requests)
    result = recall(
        served, "alice", "alice", model="gpt-4.1-mini", base_url=served.listener.url,
        routing_model="gpt-4.1-mini", structured_output="prompt",
    )  # fmt: skip
    assert secret(0) in result.context
    assert served.listener.requests == [], "the client's endpoint saw a request"
    seen = served.endpoint.requests[before:]
    assert seen, "the deployment's own model is still the one called"
    assert {r.authorization for r in seen} == {f"Bearer {CANARY}"}
    assert {r.body["model"] for r in seen} == {"deployment-model"}


def test_a_client_cannot_choose_the_store(served: Served, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    result = recall(served, "alice", "alice", store_dir=str(elsewhere), chroma_url="http://x:1")
    assert secret(0) in result.context, "recalled from the deployment's store"
    assert not elsewhere.exists()


@pytest.mark.parametrize("asked", ["alice", "bob", "default"])
def test_a_user_recalls_only_their_own_memories(served: Served, asked: str) -> None:
    result = recall(served, "bob", asked)
    assert {e.memory.namespace for e in result.evidence} == {"bob"}
    assert secret(1) in result.context and secret(0) not in result.context
    own = recall(served, "alice", "bob")
    assert {e.memory.namespace for e in own.evidence} == {"alice"}


def test_a_chat_turn_is_remembered_in_the_users_own_namespace(served: Served) -> None:
    store = Services(served.context.deployment).store()
    before = {ns: store.count_units(ns) for ns in ("alice", "bob")}
    out = served.client("bob").runs.wait(
        None,
        "chat",
        input={"messages": [{"role": "user", "content": "I adopted a cat called Pixel."}]},
        context={"namespace": "alice", "user_name": "Bob"},
    )
    assert isinstance(out, dict) and "__error__" not in out, out
    assert store.count_units("alice") == before["alice"]
    assert store.count_units("bob") == before["bob"] + 1
    assert any("Pixel" in u.text for u in store.all_units("bob"))


def test_a_user_cannot_reach_another_users_threads(served: Served) -> None:
    alice, bob = served.client("alice"), served.client("bob")
    thread = alice.threads.create()
    alice.runs.wait(thread["thread_id"], "recall", input={"query": LOCKER, "namespace": "alice"})
    tid = thread["thread_id"]
    assert secret(0) in alice.threads.get_state(tid)["values"]["context"]
    assert tid not in {t["thread_id"] for t in bob.threads.search(limit=100)}
    for attempt in (
        lambda: bob.threads.get(tid),
        lambda: bob.threads.get_state(tid),
        lambda: bob.threads.get_history(tid),
        lambda: bob.threads.update(tid, metadata={"owner": "bob"}),
        lambda: bob.runs.wait(tid, "recall", input={"query": LOCKER, "namespace": "alice"}),
        lambda: bob.threads.delete(tid),
    ):
        with pytest.raises(httpx.HTTPStatusError) as refused:
            attempt()
        assert refused.value.response.status_code in (403, 404)
    assert alice.threads.get(tid)["metadata"]["owner"] == "alice"


def test_the_store_api_reaches_only_the_users_own_memory(served: Served) -> None:
    """``/store/items`` is RippleGraphStore: a user's tuple is their memory, nobody else's."""
    alice, bob = served.client("alice"), served.client("bob")
    store = Services(served.context.deployment).store()
    before = store.count_units("bob")
    alice.store.put_item(("alice", "notes"), "diet", {"text": "I went vegetarian in May."})
    assert alice.store.get_item(("alice", "notes"), "diet")["value"] == {
        "text": "I went vegetarian in May."
    }
    hits = alice.store.search_items(("alice",), query=LOCKER, limit=10)["items"]
    assert any(secret(0) in hit["value"]["recall"]["memory"] for hit in hits), "chat memory"
    assert {tuple(hit["namespace"]) for hit in hits} <= {("alice",), ("alice", "notes")}
    refused = [
        lambda: alice.store.search_items(("bob",), query=LOCKER),
        lambda: alice.store.put_item(("bob",), "x", {"text": "Bob owes Alice $500."}),
        lambda: alice.store.list_namespaces(prefix=("bob",)),
        lambda: bob.store.get_item(("alice", "notes"), "diet"),
        lambda: bob.store.delete_item(("alice", "notes"), "diet"),
        lambda: bob.store.search_items(("bob:2Fx",)),  # a tuple that is not bob's once written
    ]
    for call in refused:
        with pytest.raises(httpx.HTTPStatusError) as error:
            call()
        assert error.value.response.status_code == 403
    assert store.count_units("bob") == before
    assert alice.store.get_item(("alice", "notes"), "diet")["value"]["text"].startswith("I went")


def test_user_namespaces_may_not_nest(tmp_path: Path) -> None:
    users = tmp_path / "users.json"
    auth.add_user(users, "team", "team")
    with pytest.raises(ValueError, match="overlaps 'team'"):
        auth.add_user(users, "ana", "team/ana")
    auth.add_user(users, "teammate", "teammate")  # a longer name is not below it


def test_a_providers_error_text_never_reaches_a_served_client(served: Served) -> None:
    """The endpoint refuses the key and quotes it: the client sees the class and status only."""
    script = served.endpoint.script
    refusal = f"Incorrect API key provided: Bearer {CANARY}. You can find your API key at …"
    served.endpoint.script = lambda request: Reply(status=401, error=refusal)
    try:
        before = len(served.endpoint.requests)
        out = served.client("alice").runs.wait(
            None, "recall", input={"query": LOCKER, "namespace": "alice"}
        )
    finally:
        served.endpoint.script = script
    assert len(served.endpoint.requests) > before, "the deployment's model was asked"
    said = json.dumps(out)
    assert CANARY not in said and "Incorrect API key" not in said
    assert "AuthenticationError 401" in said
    assert secret(0) in RecallOutput.model_validate(out).context, "recalled offline instead"


def test_a_session_date_past_the_calendar_is_refused_in_words(served: Served) -> None:
    session = {
        "id": "late",
        "date": "9999-12-31T23:59:59",
        "turns": [{"speaker": "Alice", "text": "See you at the end of time."}],
    }
    with pytest.raises(Exception, match="years 1 to 9000") as refused:
        served.client("alice").runs.wait(
            None, "ingest", input={"namespace": "alice", "sessions": [session]}
        )
    assert "internal error" not in str(refused.value).lower()
