"""An OpenAI-compatible HTTP server on loopback with scripted replies, for tests.

It speaks the real wire protocol that langchain-openai and the ``openai`` client use
(``POST /v1/chat/completions``, ``POST /v1/completions`` with ``echo`` and ``logprobs``), so
tests exercise the real client stack: HTTP, status codes, retries, usage accounting.  Usage
is counted here (≈4 characters per token), so token costs measured against it are the
server's numbers, not the client's estimates.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_TITLE = re.compile(r'"title":"(\w+Output)"\s*,\s*"type":"object"\}\s*$')
ROLES = {
    "ExtractionOutput": "extraction",
    "ControllerOutput": "controller",
    "RouterOutput": "root_router",
    "ConsolidationOutput": "root_consolidation",
    "CounterfactualOutput": "counterfactual",
    "CausalOutput": "causal",
    "AnswerOutput": "answer",
    "JudgeOutput": "judge",
    "ChoiceOutput": "choice",
}


@dataclass
class Reply:
    """One scripted HTTP reply: a chat completion's content, or an error status."""

    content: str = ""
    status: int = 200
    error: str = ""  # the error message of a non-200 reply [default: "scripted <status>"]
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (name, args)


@dataclass
class Request:
    """One chat request as the server saw it."""

    role: str
    system: str
    user: str
    messages: list[dict[str, Any]]
    body: dict[str, Any]
    authorization: str = ""  # the Authorization header the client sent


def role_of(body: dict[str, Any]) -> str:
    """Which RippleGraph role a request is for (from the schema title in its system prompt)."""
    system = str(body["messages"][0].get("content", ""))
    match = _TITLE.search(system)
    return ROLES.get(match.group(1), "unknown") if match else "unknown"


def tokens(text: str) -> int:
    return len(text) // 4 + 1


@dataclass
class ScriptedOpenAI:
    """A loopback server whose ``script`` decides every chat reply."""

    script: Callable[[Request], Reply]
    scorer: Callable[[str], list[float]] | None = None
    requests: list[Request] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)  # total tokens per role

    def __post_init__(self) -> None:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status == 429:
                    self.send_header("Retry-After", "0")
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path.endswith("/chat/completions"):
                    status, payload = owner._chat(body, self.headers.get("Authorization", ""))
                elif self.path.endswith("/completions"):
                    status, payload = owner._completion(body)
                else:
                    status, payload = 404, {"error": {"message": "no such route"}}
                self._send(status, payload)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        """The ``base_url`` to configure (``…/v1``)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def close(self) -> None:
        """Stop serving."""
        self._server.shutdown()
        self._server.server_close()

    def calls(self, role: str | None = None) -> int:
        """Requests seen, for one role or all."""
        return sum(1 for r in self.requests if role is None or r.role == role)

    def _chat(self, body: dict[str, Any], authorization: str) -> tuple[int, dict[str, Any]]:
        messages = body["messages"]
        request = Request(
            role=role_of(body),
            system=str(messages[0].get("content", "")),
            user=str(messages[1].get("content", "")) if len(messages) > 1 else "",
            messages=messages,
            body=body,
            authorization=authorization,
        )
        with self._lock:
            self.requests.append(request)
        reply = self.script(request)
        if reply.status != 200:
            kind = "rate_limit_exceeded" if reply.status == 429 else "server_error"
            message = reply.error or f"scripted {reply.status}"
            return reply.status, {"error": {"message": message, "type": kind}}
        prompt = tokens("".join(str(m.get("content", "")) for m in messages))
        completion = tokens(reply.content)
        with self._lock:
            self.usage[request.role] = self.usage.get(request.role, 0) + prompt + completion
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{len(self.requests)}_{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for i, (name, args) in enumerate(reply.tool_calls)
            ]
        return 200, {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }

    def _completion(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Legacy completions with ``echo``: per-word log-probabilities from ``scorer``."""
        if self.scorer is None:
            return 400, {"error": {"message": "echo with logprobs is not supported"}}
        prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
        choices = []
        for index, prompt in enumerate(prompts):
            words = [m for m in re.finditer(r"\S+\s*", prompt)]
            logprobs = self.scorer(prompt)
            choices.append(
                {
                    "index": index,
                    "text": prompt,
                    "finish_reason": "length",
                    "logprobs": {
                        "tokens": [w.group() for w in words],
                        "token_logprobs": [None, *logprobs[1 : len(words)]],
                        "text_offset": [w.start() for w in words],
                        "top_logprobs": None,
                    },
                }
            )
        return 200, {
            "id": "cmpl-1",
            "object": "text_completion",
            "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": choices,
            "usage": {"prompt_tokens": 1, "completion_tokens": 0, "total_tokens": 1},
        }
