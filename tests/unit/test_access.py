"""The network surface rule's parts, without a server: loopback, token strength, throttle."""

from __future__ import annotations

import pytest
from starlette.types import Scope

from ripplegraph.agent.surfaces.access import (
    MIN_TOKEN_CHARS,
    AccessError,
    Gate,
    SignInThrottle,
    checked_token,
    is_loopback,
)

STRONG = "Yh7-Qe2r-Nw5t-Bv9k-Mz3x-Lp8j"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.9.9.9", True), ("::1", True), ("[::1]", True),
     ("localhost", True), ("0.0.0.0", False), ("::", False), ("10.0.0.5", False),
     ("example.com", False)],
)  # fmt: skip
def test_loopback_is_any_loopback_address_or_name(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_a_token_is_optional_on_loopback_and_must_be_strong_everywhere() -> None:
    assert checked_token("127.0.0.1", None) is None
    assert checked_token("0.0.0.0", STRONG) == STRONG
    for weak in (
        "a",
        "s3cret",
        "a" * 40,
        "abcabcabcabcabcabcabcabcabc",
        STRONG[: MIN_TOKEN_CHARS - 1],
    ):
        with pytest.raises(AccessError, match="too weak"):
            checked_token("127.0.0.1", weak)
    with pytest.raises(AccessError, match=r"generated now: [A-Za-z0-9_-]{43}") as refused:
        checked_token("0.0.0.0", None, option="--access-token")
    assert "--access-token" in str(refused.value)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_throttle_doubles_the_wait_after_the_free_misses_and_forgets_on_success() -> None:
    clock = Clock()
    throttle = SignInThrottle(free=2, longest=8.0, clock=clock)
    waits = []
    for _ in range(7):
        throttle.missed("a")
        waits.append(throttle.wait("a"))
    assert waits == [0.0, 0.0, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert throttle.wait("b") == 0.0, "per client"
    clock.now += 8.0
    assert throttle.wait("a") == 0.0
    throttle.succeeded("a")
    throttle.missed("a")
    assert throttle.wait("a") == 0.0


def test_the_throttle_remembers_a_bounded_number_of_clients() -> None:
    throttle = SignInThrottle(free=0, clients=3, clock=Clock())
    for client in "abcde":
        throttle.missed(client)
    assert [throttle.wait(c) > 0 for c in "abcde"] == [False, False, True, True, True]


def scope(host: str, origin: str | None = None, authorization: str | None = None) -> Scope:
    headers = [(b"host", host.encode())]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    if authorization is not None:
        headers.append((b"authorization", authorization.encode()))
    return {"type": "http", "path": "/mcp", "headers": headers, "client": ("127.0.0.1", 5)}


def status(gate: Gate, request: Scope) -> int:
    refusal = gate.refusal(request)
    return 200 if refusal is None else refusal.status_code


def test_the_gate_checks_host_origin_and_bearer() -> None:
    loopback = Gate(host="127.0.0.1")
    assert status(loopback, scope("127.0.0.1:8000")) == 200
    assert status(loopback, scope("[::1]:8000")) == 200
    assert status(loopback, scope("evil.example:8000")) == 421
    assert status(loopback, scope("localhost:8000", "http://evil.example")) == 403
    assert status(loopback, scope("localhost:8000", "http://localhost:8000")) == 200
    assert status(loopback, scope("[::1")) == 421, "a malformed Host"
    anywhere = Gate(host="0.0.0.0", token=STRONG)
    assert status(anywhere, scope("evil.example:8000")) == 401
    assert status(anywhere, scope("evil.example:8000", authorization=f"Bearer {STRONG}")) == 200
    wrong = scope("10.0.0.5:8000", authorization="Bearer nope")
    assert [status(anywhere, wrong) for _ in range(8)] == [401] * 6 + [429] * 2
