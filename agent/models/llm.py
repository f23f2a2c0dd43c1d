"""The one LLM call path: JSON output checked against the role's schema, retries, re-asks, budgets.

Every role goes through ``RoleCaller``:

- Transient errors (rate limit, timeout, 5xx, lost connection) are retried with exponential
  backoff (tenacity).
- A reply that does not parse into the role's pydantic schema is re-asked a bounded number of
  times, with the validation error quoted.
- Each attempt is counted, calls and estimated tokens, before it is made, and an attempt that
  would overrun the allowance is not made. The estimate is then replaced by the usage the
  provider reports, so nothing tokenizes locally (no tiktoken download). The prompt estimate
  errs high (3 characters per token, English BPE runs near 4) and tightens to the densest
  tokenization each model has reported, so a model that tokenizes densely cannot overrun.

- Where the endpoint can constrain decoding to a schema, the role's pydantic schema goes with
  the request as a response format (``json_schema``: OpenAI, vLLM, llama.cpp's
  ``llama-server``; ``json_object`` with a ``schema``: llama-cpp-python's server), so even a
  small local model returns valid JSON; elsewhere the JSON-in-prompt instructions and the
  re-ask do the work alone.  ``auto`` probes an endpoint once: a request the endpoint rejects
  for its response format is asked again in the next mode, and the mode that worked is kept
  for that endpoint.  The prompt, the estimate and the accounting are the same in every mode.

When a step still has no valid value, ``Outcome.value`` is ``None`` and the caller runs the
offline policy for that step, putting ``Outcome.note`` in its trace event. No exception leaves
the call path.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Generic, NamedTuple, TypeVar, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ValidationError
from tenacity import (
    Future,
    RetryAction,
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
)
from tenacity.wait import wait_exponential

from ripplegraph.agent.errors import BudgetSpent
from ripplegraph.agent.spend import NOTHING, Spend
from ripplegraph.prompts.role import OutputMode, Role, StructuredOutput

S = TypeVar("S", bound=BaseModel)
PROBE_ORDER: tuple[OutputMode, ...] = ("json_schema", "json_object", "prompt")
log = logging.getLogger(__name__)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)


DEFAULT_CHARS_PER_TOKEN = 3.0
MESSAGE_OVERHEAD_TOKENS = 8  # chat-template tokens around each message
_chars_per_token: dict[str, float] = {}  # per model: the densest prompt tokenization seen
_endpoint_modes: dict[str, OutputMode] = {}  # per model and endpoint: the mode that worked


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate (≈4 characters per token) so nothing is downloaded."""
    return len(text) // 4 + 1


@dataclass
class Outcome(Generic[S]):
    """A role's parsed reply (``None`` = use the offline policy), what it cost, what happened."""

    value: S | None = None
    spent: Spend = NOTHING
    events: list[str] = field(default_factory=list)
    served: int = 0  # replies the endpoint returned (a call may fail before it answers)
    valid: int = 0  # replies that parsed into the role's schema
    modes: list[str] = field(default_factory=list)  # the output mode of each served reply
    seconds: float = 0.0  # wall time spent waiting on the endpoint

    @property
    def note(self) -> str:
        """One line for the trace."""
        return "; ".join(self.events) or "ok"


def is_transient(error: BaseException) -> bool:
    """Rate limits, timeouts, 5xx and lost connections: worth another attempt."""
    import httpx
    import openai

    if isinstance(error, openai.APIStatusError):
        return error.status_code in (408, 409, 429) or error.status_code >= 500
    transient = (openai.APIConnectionError, httpx.TransportError, TimeoutError, ConnectionError)
    return isinstance(error, transient)


def describe(error: BaseException) -> str:
    """A provider's failure as its class and HTTP status, never its text.

    This is what traces, served output and pages show: a provider's message can quote the
    request's credentials ("Incorrect API key provided: sk-…") or its prompt.  The text stays
    in the server's log.
    """
    status = getattr(error, "status_code", None)
    return f"{type(error).__name__}" + (f" {status}" if status else "")


def parse_reply(schema: type[S], text: str) -> S:
    """The reply's JSON object (code fences and surrounding prose tolerated), validated."""
    cleaned = _FENCE.sub("", text.strip())
    start, end = cleaned.find("{"), cleaned.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("the reply holds no JSON object")
    try:
        return schema.model_validate_json(cleaned[start : end + 1])
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['msg']}" for e in error.errors()[:4]
        )
        raise ValueError(problems) from error


class Choice(NamedTuple):
    """The values a list field of a reply may hold, and how many it must hold at least."""

    values: Collection[str]
    at_least: int = 0


Choices = Mapping[str, Choice]


_UNBOUNDED = frozenset({"maxLength", "maxItems"})


def _without_upper_bounds(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_upper_bounds(v) for k, v in node.items() if k not in _UNBOUNDED}
    if isinstance(node, list):
        return [_without_upper_bounds(v) for v in node]
    return node


def narrowed_schema(role: Role[Any], choices: Choices | None = None) -> dict[str, Any]:
    """The schema constrained decoding follows.

    It is the role's schema without upper length bounds, each list field named in
    ``choices`` held to its values.  Grammar-based decoders unroll a bound into one rule per
    position (llama.cpp refuses the answer's 4,000-character bound, and its server then
    crashes), so bounds are left to the reply's validation and the reply cap.  Held to
    ``choices``, a small model's citations are ids the prompt showed; ``at_least`` makes the
    field required.  A choice without values leaves its field as the role defines it.
    """
    schema: dict[str, Any] = _without_upper_bounds(role.schema.model_json_schema())
    for name, choice in (choices or {}).items():
        if not choice.values:
            continue
        field = schema["properties"][name]
        field["items"] = {"type": "string", "enum": sorted(choice.values)}
        if choice.at_least:
            field["minItems"] = choice.at_least
            schema["required"] = sorted({*schema.get("required", []), name})
    return schema


def response_format(
    role: Role[Any], mode: OutputMode, choices: Choices | None = None
) -> dict[str, Any] | None:
    """The request's response format for ``mode`` (``None`` for JSON-in-prompt only)."""
    schema = narrowed_schema(role, choices)
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": role.name, "schema": schema, "strict": False},
        }
    if mode == "json_object":
        return {"type": "json_object", "schema": schema}
    return None


def rejects_format(error: BaseException) -> bool:
    """Whether the endpoint refused the request for its response format (not its content).

    Servers say so differently: OpenAI-style 400s, FastAPI's 422, and llama-cpp-python's
    500 that quotes the failed validation of ``response_format``.
    """
    import openai

    if not isinstance(error, openai.APIStatusError) or error.status_code not in (400, 422, 500):
        return False
    text = str(error).lower()
    return "response_format" in text or "json_schema" in text


class RoleCaller:
    """Calls one chat model for any role, within an allowance, never raising."""

    def __init__(
        self,
        model: BaseChatModel,
        *,
        attempts: int = 3,
        reasks: int = 1,
        backoff_seconds: float = 0.5,
        backoff_max_seconds: float = 8.0,
        openai_compatible: bool = False,
        model_key: str | None = None,
        structured_output: StructuredOutput = "auto",
    ) -> None:
        self.model = model
        self.structured_output = structured_output
        # Response formats are OpenAI's wire protocol; other providers get JSON-in-prompt.
        from langchain_openai.chat_models.base import BaseChatOpenAI

        self.speaks_openai = isinstance(model, BaseChatOpenAI)
        # What the tokenization density is remembered under: the configured model, or this
        # very instance when none is named (so two unnamed models never share it).
        self.model_key = model_key or f"{type(model).__name__}#{id(model)}"
        self.openai_compatible = openai_compatible
        self.attempts = max(1, attempts)
        self.reasks = max(0, reasks)
        self.backoff_seconds = backoff_seconds
        self.backoff_max_seconds = backoff_max_seconds

    def mode(self) -> OutputMode:
        """The output mode the next call uses: configured, or probed for this endpoint."""
        if self.structured_output != "auto":
            return self.structured_output
        if not self.speaks_openai:
            return "prompt"
        return _endpoint_modes.get(self.model_key, "json_schema")

    def __call__(
        self, role: Role[S], prompt: str, allowance: Spend, choices: Choices | None = None
    ) -> Outcome[S]:
        """Ask the model for the role's reply; re-ask on invalid output; ``value`` or ``None``.

        ``choices`` holds list fields to the values the prompt offers (ids), where the
        endpoint constrains decoding; the reply is validated against the role's schema either way.
        """
        outcome: Outcome[S] = Outcome()
        messages: list[BaseMessage] = [SystemMessage(role.system_prompt()), HumanMessage(prompt)]
        for _ in range(1 + self.reasks):
            try:
                reply = self._probing(role, messages, allowance, outcome, choices)
            except BudgetSpent as error:
                outcome.events.append(f"not called: {error}")
                return outcome
            except Exception as error:  # any provider failure ends in the offline policy
                outcome.events.append(f"model failed: {describe(error)}")
                log.warning("%s call failed: %s: %s", role.name, describe(error), error)
                return outcome
            try:
                outcome.value = parse_reply(role.schema, reply.text)
                outcome.valid += 1
                return outcome
            except ValueError as error:
                outcome.events.append(f"invalid reply ({error})")
                messages += [
                    AIMessage(reply.text),
                    HumanMessage(
                        f"That reply was not valid: {error}. Reply again with only the JSON "
                        "object, matching the schema."
                    ),
                ]
        outcome.events.append(f"no valid reply after {1 + self.reasks} asks")
        return outcome

    def _probing(
        self,
        role: Role[S],
        messages: Sequence[BaseMessage],
        allowance: Spend,
        outcome: Outcome[S],
        choices: Choices | None,
    ) -> AIMessage:
        """One reply; in ``auto``, a format the endpoint rejects moves it to the next mode."""
        import openai  # a configured model's call path: the offline policies never get here

        while True:
            mode = self.mode()
            try:
                attempt = partial(self._attempt, role, messages, allowance, outcome, mode, choices)
                reply = self._attempts(outcome, attempt)
            except openai.APIStatusError as error:
                if (
                    self.structured_output != "auto"
                    or mode == "prompt"
                    or not rejects_format(error)
                ):
                    raise
                following = PROBE_ORDER[PROBE_ORDER.index(mode) + 1]
                _endpoint_modes[self.model_key] = following
                outcome.events.append(
                    f"the endpoint rejects {mode} output ({describe(error)}); using {following}"
                )
                continue
            _endpoint_modes.setdefault(self.model_key, mode)
            outcome.served += 1
            outcome.modes.append(mode)
            return reply

    def _request_options(
        self, role: Role[S], mode: OutputMode, choices: Choices | None = None
    ) -> dict[str, Any]:
        """The reply-length cap and response format, in the fields the endpoint honours.

        langchain-openai sends ``max_completion_tokens``, which OpenAI reads but llama.cpp's
        Python server ignores; OpenAI-compatible servers all read ``max_tokens``.  The
        response format goes in the request body as it is: passed to langchain-openai, it
        would switch to the SDK's parse path, which rewrites the format.
        """
        body: dict[str, Any] = {}
        options: dict[str, Any] = {}
        if self.openai_compatible:
            body["max_tokens"] = role.max_output_tokens
        else:
            options["max_tokens"] = role.max_output_tokens
        if (constrained := response_format(role, mode, choices)) is not None:
            body["response_format"] = constrained
        if body:
            options["extra_body"] = body
        return options

    def _attempts(self, outcome: Outcome[S], attempt: Callable[[], AIMessage]) -> AIMessage:
        """One reply, retrying transient errors with exponential backoff; each retry noted."""

        def note_retry(state: RetryCallState) -> None:
            # Before it sleeps, tenacity holds the failed attempt (only errors are retried)
            # and the next wait; the casts only tell the type checker so.
            failed = cast(Future, state.outcome)  # pragma: no mutate
            error = cast(BaseException, failed.exception())  # pragma: no mutate
            wait = cast(RetryAction, state.next_action).sleep  # pragma: no mutate
            outcome.events.append(f"{describe(error)}; retry in {wait:.2f}s")

        retrying = Retrying(
            stop=stop_after_attempt(self.attempts),
            wait=wait_exponential(multiplier=self.backoff_seconds, max=self.backoff_max_seconds),
            retry=retry_if_exception(lambda e: is_transient(e) and not rejects_format(e)),
            before_sleep=note_retry,
            reraise=True,
        )
        return retrying(attempt)

    def _attempt(
        self,
        role: Role[S],
        messages: Sequence[BaseMessage],
        allowance: Spend,
        outcome: Outcome[S],
        mode: OutputMode,
        choices: Choices | None,
    ) -> AIMessage:
        """One call, made only if its worst case fits the allowance; usage corrects the count.

        The worst case is the prompt at the densest tokenization this model has reported,
        a per-message overhead, and the whole reply cap.
        """
        chars = sum(len(m.text) for m in messages)
        density = _chars_per_token.get(self.model_key, DEFAULT_CHARS_PER_TOKEN)
        estimate = (
            math.ceil(chars / density)
            + MESSAGE_OVERHEAD_TOKENS * len(messages)
            + role.max_output_tokens
        )
        left = outcome.spent.left_of(allowance)
        if left.calls < 1:
            raise BudgetSpent(f"{allowance.calls} LLM call(s) allowed, none left")
        if estimate > left.tokens:
            raise BudgetSpent(f"~{estimate} tokens needed, {left.tokens} left")
        outcome.spent += Spend(calls=1, tokens=estimate)
        started = time.perf_counter()
        try:
            reply = self.model.invoke(list(messages), **self._request_options(role, mode, choices))
        finally:
            outcome.seconds += time.perf_counter() - started
        if not isinstance(reply, AIMessage):
            raise TypeError(f"expected an AIMessage, got {type(reply).__name__}")
        usage = reply.usage_metadata
        if usage:
            outcome.spent += Spend(tokens=int(usage["total_tokens"]) - estimate)
            if usage["input_tokens"]:
                _chars_per_token[self.model_key] = min(density, chars / usage["input_tokens"])
        return reply
