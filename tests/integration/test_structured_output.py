"""Constrained structured output, seen in what a real OpenAI-compatible server receives.

The server is the scripted one on loopback: every request body it records is asserted on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from ripplegraph.agent.decisions.roles import answer
from ripplegraph.agent.models.llm import (
    Choice,
    Outcome,
    RoleCaller,
    StructuredOutput,
    narrowed_schema,
)
from ripplegraph.agent.services import Services
from ripplegraph.agent.spend import Spend
from ripplegraph.prompts import answer as answer_prompt
from ripplegraph.prompts import counterfactual
from ripplegraph.prompts.counterfactual import CounterfactualOutput
from tests.conftest import deployed
from tests.openai_server import Reply, Request, ScriptedOpenAI

pytestmark = pytest.mark.integration
RISKS = Reply(json.dumps({"risks": ["Maya could react to seafood."]}))
REJECTED = "1 validation error: body.response_format.type: Input should be 'text' or 'json_object'"


@pytest.fixture
def servers() -> Iterator[list[ScriptedOpenAI]]:
    started: list[ScriptedOpenAI] = []
    yield started
    for server in started:
        server.close()


def caller(server: ScriptedOpenAI, mode: StructuredOutput = "auto", name: str = "m") -> RoleCaller:
    context = deployed(
        store_dir="unused", model=name, base_url=server.url, structured_output=mode,
        backoff_seconds=0.01,
    )  # fmt: skip
    made = Services(context.deployment).caller()
    assert made is not None
    return made


def ask(role_caller: RoleCaller) -> Outcome[CounterfactualOutput]:
    return role_caller(counterfactual.ROLE, "<request>dinner</request>", Spend(4, 20_000))


def test_json_schema_mode_sends_the_schema_and_the_reply_cap(
    servers: list[ScriptedOpenAI],
) -> None:
    server = ScriptedOpenAI(lambda request: RISKS)
    servers.append(server)
    outcome = ask(caller(server, "json_schema"))
    assert outcome.value is not None and outcome.modes == ["json_schema"]
    body = server.requests[0].body
    assert body["max_tokens"] == counterfactual.ROLE.max_output_tokens
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "counterfactual",
            "schema": narrowed_schema(counterfactual.ROLE),
            "strict": False,
        },
    }


def test_auto_probes_an_endpoint_once_and_keeps_the_mode_that_works(
    servers: list[ScriptedOpenAI],
) -> None:
    def llama_cpp_python(request: Request) -> Reply:
        if request.body.get("response_format", {}).get("type") == "json_schema":
            return Reply(status=500, error=REJECTED)
        return RISKS

    server = ScriptedOpenAI(llama_cpp_python)
    servers.append(server)
    first = ask(caller(server, name="probe-once"))
    assert first.value is not None and first.modes == ["json_object"]
    assert first.spent.calls == 2 and first.served == 1  # the probe counts
    assert "rejects json_schema output" in first.note
    second = ask(caller(server, name="probe-once"))
    assert second.spent.calls == 1 and second.modes == ["json_object"]
    formats = [r.body.get("response_format", {}).get("type") for r in server.requests]
    assert formats == ["json_schema", "json_object", "json_object"]
    assert server.requests[1].body["response_format"]["schema"] == narrowed_schema(
        counterfactual.ROLE
    )


def test_an_endpoint_without_response_formats_gets_json_in_the_prompt(
    servers: list[ScriptedOpenAI],
) -> None:
    def plain(request: Request) -> Reply:
        if "response_format" in request.body:
            return Reply(status=400, error="response_format is not supported")
        return RISKS

    server = ScriptedOpenAI(plain)
    servers.append(server)
    outcome = ask(caller(server, name="plain-endpoint"))
    assert outcome.value is not None and outcome.modes == ["prompt"]
    assert "response_format" not in server.requests[-1].body
    assert "Reply with one JSON object" in server.requests[-1].system


def test_a_server_error_is_not_mistaken_for_a_rejected_format(
    servers: list[ScriptedOpenAI],
) -> None:
    server = ScriptedOpenAI(lambda request: Reply(status=500))
    servers.append(server)
    outcome = ask(caller(server, name="storm"))
    assert outcome.value is None and outcome.served == 0
    assert all(r.body["response_format"]["type"] == "json_schema" for r in server.requests)
    assert len(server.requests) == 3  # retried as a transient error, never re-formatted


def test_budget_counts_the_same_in_every_mode(servers: list[ScriptedOpenAI]) -> None:
    server = ScriptedOpenAI(lambda request: RISKS)
    servers.append(server)
    spent = {}
    modes: tuple[StructuredOutput, ...] = ("json_schema", "json_object", "prompt")
    for mode in modes:
        outcome = ask(caller(server, mode, name=f"budget-{mode}"))
        spent[mode] = (outcome.spent.calls, outcome.spent.tokens)
    assert len(set(spent.values())) == 1, spent


def test_answers_cite_only_the_evidence_they_were_given(servers: list[ScriptedOpenAI]) -> None:
    reply = {"answer": "Better not.", "cited_ids": ["m_1", "m_made_up"], "supported": True}
    server = ScriptedOpenAI(lambda request: Reply(json.dumps(reply)))
    servers.append(server)
    value, usage = answer(
        caller(server, "json_object"),
        "Harbor Grill?",
        "<memories/>",
        {"m_1", "m_2"},
        Spend(2, 20_000),
    )
    assert value is not None and value.cited_ids == ["m_1"]
    assert usage.trace("answer")["output"] == "json_object"
    schema = server.requests[0].body["response_format"]["schema"]
    assert schema["properties"]["cited_ids"]["items"] == {"type": "string", "enum": ["m_1", "m_2"]}
    assert schema["properties"]["cited_ids"]["minItems"] == 1
    assert "cited_ids" in schema["required"]


def test_decoding_schemas_leave_length_bounds_to_validation() -> None:
    full = answer_prompt.ROLE.schema.model_json_schema()
    assert full["properties"]["answer"]["maxLength"] == 4000
    decoded = narrowed_schema(answer_prompt.ROLE, {"cited_ids": Choice(["m_9"])})
    assert "maxLength" not in json.dumps(decoded) and "maxItems" not in json.dumps(decoded)
    assert decoded["properties"]["answer"]["minLength"] == 1
    assert "minItems" not in decoded["properties"]["cited_ids"]
    assert narrowed_schema(answer_prompt.ROLE, {"cited_ids": Choice([])}) == narrowed_schema(
        answer_prompt.ROLE
    )
