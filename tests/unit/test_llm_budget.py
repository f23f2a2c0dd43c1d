"""The LLM call path's budget and reply limits, counted exactly (``make mutate`` judges these)."""

from __future__ import annotations

import math
import time
from itertools import count
from typing import Any

import httpx
import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from ripplegraph.agent.models.llm import (
    DEFAULT_CHARS_PER_TOKEN,
    MESSAGE_OVERHEAD_TOKENS,
    RoleCaller,
    estimate_tokens,
)
from ripplegraph.agent.spend import Spend
from ripplegraph.prompts import answer, root_router
from tests.fake_model import ScriptedChatModel

GOOD = '{"answer": "ok", "cited_ids": [], "supported": true}'
_keys = count()


def caller(*replies: Any, **settings: Any) -> tuple[RoleCaller, ScriptedChatModel]:
    """A caller with a model key of its own, so no other test's density applies."""
    model = ScriptedChatModel(script=list(replies))
    return RoleCaller(model, model_key=f"budget-test-{next(_keys)}", **settings), model


def first_estimate(prompt: str) -> int:
    chars = len(answer.ROLE.system_prompt()) + len(prompt)
    return (
        math.ceil(chars / DEFAULT_CHARS_PER_TOKEN)
        + 2 * MESSAGE_OVERHEAD_TOKENS
        + answer.ROLE.max_output_tokens
    )


def test_estimate_tokens_is_a_whole_number() -> None:
    assert estimate_tokens("abcdefg") == 2
    assert estimate_tokens("") == 1


def test_without_reported_usage_a_call_costs_its_worst_case_estimate() -> None:
    role_caller, _ = caller(AIMessage(GOOD))
    outcome = role_caller(answer.ROLE, "hello there", Spend(1, 100_000))
    assert outcome.value is not None
    assert (outcome.spent.calls, outcome.spent.tokens) == (1, first_estimate("hello there"))


def test_a_call_is_made_when_it_fits_exactly() -> None:
    exact = first_estimate("x")
    fits, _ = caller(AIMessage(GOOD))
    assert fits(answer.ROLE, "x", Spend(1, exact)).spent.calls == 1
    short, model = caller(AIMessage(GOOD))
    refused = short(answer.ROLE, "x", Spend(1, exact - 1))
    assert refused.spent.calls == 0 and model.seen == []
    assert refused.note == f"not called: ~{exact} tokens needed, {exact - 1} left"


def test_a_reask_is_refused_with_what_is_left() -> None:
    calls_spent, _ = caller(AIMessage("nonsense"), AIMessage(GOOD))
    one_call = calls_spent(answer.ROLE, "x", Spend(1, 100_000))
    assert one_call.spent.calls == 1 and one_call.value is None
    assert one_call.note.endswith("not called: 1 LLM call(s) allowed, none left")
    tokens_spent, _ = caller(AIMessage("nonsense", usage_metadata=usage(10, 900)))
    allowance = Spend(5, first_estimate("x") + 500)
    short = tokens_spent(answer.ROLE, "x", allowance)
    assert short.spent.calls == 1 and short.spent.tokens == 900
    assert short.note.endswith(f"tokens needed, {allowance.tokens - 900} left")


def usage(prompt: int, total: int) -> Any:
    return {"input_tokens": prompt, "output_tokens": total - prompt, "total_tokens": total}


def test_reported_usage_replaces_the_estimate_and_a_zero_prompt_count_is_ignored() -> None:
    role_caller, _ = caller(AIMessage(GOOD, usage_metadata=usage(0, 5)))
    outcome = role_caller(answer.ROLE, "x", Spend(1, 100_000))
    assert outcome.value is not None and outcome.spent.tokens == 5
    again = role_caller(answer.ROLE, "x", Spend(1, 100_000))
    assert again.spent.tokens == 5  # the density is unchanged, and no division by zero


def test_the_reply_cap_reaches_the_model() -> None:
    plain, model = caller(AIMessage(GOOD))
    plain(answer.ROLE, "x", Spend(1, 100_000))
    assert model.options == [{"max_tokens": answer.ROLE.max_output_tokens}]
    compatible, model = caller(AIMessage(GOOD), openai_compatible=True)
    compatible(answer.ROLE, "x", Spend(1, 100_000))
    assert model.options == [{"extra_body": {"max_tokens": answer.ROLE.max_output_tokens}}]


def test_a_reply_that_is_no_ai_message_is_a_model_failure() -> None:
    role_caller, _ = caller(HumanMessage(GOOD))
    outcome = role_caller(answer.ROLE, "x", Spend(1, 100_000))
    assert outcome.value is None
    assert outcome.note == "model failed: TypeError"


class Refusing(ScriptedChatModel):
    """Answers like a provider that rejects the key, quoting it in its message."""

    def _generate(self, *args: Any, **kwargs: Any) -> Any:
        request = httpx.Request("POST", "http://127.0.0.1:1/v1/chat/completions")
        response = httpx.Response(401, request=request)
        raise openai.AuthenticationError(
            "Incorrect API key provided: Bearer sk-canary-1234", response=response, body=None
        )


def test_a_providers_error_text_never_reaches_the_trace() -> None:
    model = Refusing(script=[])
    outcome = RoleCaller(model, model_key="budget-refusing")(answer.ROLE, "x", Spend(1, 100_000))
    assert outcome.value is None
    assert outcome.note == "model failed: AuthenticationError 401"
    assert "sk-canary" not in " ".join(outcome.events)


class Failing(ScriptedChatModel):
    """Times out on every call, after a short wait."""

    def _generate(self, *args: Any, **kwargs: Any) -> Any:
        self.seen.append([])
        time.sleep(0.02)
        raise TimeoutError("slow")


def test_retries_back_off_exponentially_up_to_a_cap_then_raise_the_last_error() -> None:
    model = Failing(script=[])
    role_caller = RoleCaller(
        model,
        model_key="budget-failing",
        attempts=4,
        backoff_seconds=0.02,
        backoff_max_seconds=0.05,
    )
    outcome = role_caller(root_router.ROLE, "x", Spend(10, 100_000))
    assert len(model.seen) == outcome.spent.calls == 4 and outcome.value is None
    assert outcome.events == [
        "TimeoutError; retry in 0.02s",
        "TimeoutError; retry in 0.04s",
        "TimeoutError; retry in 0.05s",
        "model failed: TimeoutError",
    ]
    assert 0.08 <= outcome.seconds < 2.0  # every attempt's wait on the model, added up


def test_system_and_prompt_are_what_is_estimated() -> None:
    role_caller, model = caller(AIMessage(GOOD))
    role_caller(answer.ROLE, "hello there", Spend(1, 100_000))
    sent = model.seen[0]
    assert [type(m) for m in sent] == [SystemMessage, HumanMessage]
    assert sum(len(m.text) for m in sent) == len(answer.ROLE.system_prompt()) + len("hello there")


@pytest.mark.parametrize("calls", [0, -1])
def test_no_call_without_an_allowance(calls: int) -> None:
    role_caller, model = caller(AIMessage(GOOD))
    outcome = role_caller(answer.ROLE, "x", Spend(calls, 100_000))
    assert (
        model.seen == [] and outcome.note == f"not called: {calls} LLM call(s) allowed, none left"
    )
