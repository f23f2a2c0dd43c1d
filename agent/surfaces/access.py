"""Who may reach a network surface (``ripplegraph ui``, ``ripplegraph mcp`` over HTTP).

One rule for every surface a process serves over HTTP:

- **On loopback** the credential is optional, and every request's ``Host`` must name a
  loopback address and its ``Origin`` (when a browser sends one) the same origin, so a page
  on another site cannot reach the surface through the user's browser (DNS rebinding, a
  cross-site form).
- **Off loopback** a credential is required and must pass ``checked_token``: a weak one is
  refused at start-up, and when none is given the refusal offers a freshly generated one.
- **Guessing is throttled per client**: after ``SignInThrottle.free`` wrong credentials a
  client waits, twice as long after each further miss, before its next try is even checked.

``Gate`` decides the Host, Origin and bearer parts and ``Guarded`` puts any ASGI app behind
one; the browser asks its gate from its own middleware and adds a sign-in form (a signed
session cookie) on top.
"""

from __future__ import annotations

import hmac
import ipaddress
import math
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ripplegraph.agent.errors import RippleGraphError

MIN_TOKEN_CHARS = 24
"""The shortest access token a surface accepts."""
MIN_TOKEN_DISTINCT = 10
"""The fewest distinct characters it must hold (``aaaa…`` is long but guessable)."""
LOOPBACK_NAMES = ("localhost",)
ANY_ADDRESS = ("0.0.0.0", "::", "")


class AccessError(RippleGraphError):
    """A surface cannot start as asked: it would be reachable without a credential that holds."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 with or without brackets) is loopback."""
    name = host.strip().strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def generated_token() -> str:
    """A fresh access token: 256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


def checked_token(host: str, token: str | None, *, option: str = "--access-token") -> str | None:
    """The credential a surface on ``host`` runs with, once it passes the rule.

    None on loopback when none is given; off loopback a missing token is refused with a
    generated one offered, and anywhere a token shorter than ``MIN_TOKEN_CHARS`` or with fewer
    than ``MIN_TOKEN_DISTINCT`` distinct characters is refused.
    """
    if token is None or token == "":
        if is_loopback(host):
            return None
        raise AccessError(
            f"--host {host} is not loopback: give {option} so that only people holding it "
            f"can read and change these memories (for example this one, generated now: "
            f"{generated_token()}), or serve on 127.0.0.1 behind a reverse proxy with TLS"
        )
    if len(token) < MIN_TOKEN_CHARS or len(set(token)) < MIN_TOKEN_DISTINCT:
        raise AccessError(
            f"{option} is too weak to hold against guessing: use at least {MIN_TOKEN_CHARS} "
            f"characters with at least {MIN_TOKEN_DISTINCT} different ones (for example this "
            f"one, generated now: {generated_token()})"
        )
    return token


def same_secret(given: str, expected: str) -> bool:
    """Compare two credentials in constant time."""
    return hmac.compare_digest(given.encode(), expected.encode())


@dataclass
class _Misses:
    count: int = 0
    until: float = 0.0


class SignInThrottle:
    """Wrong credentials per client, and how long each must wait before its next try.

    The first ``free`` misses cost nothing; after that each miss doubles the wait, from one
    second up to ``longest``.  A success forgets the client's misses.  At most ``clients``
    clients are remembered (the least recently seen go first), so memory stays bounded
    whatever a crowd of guessers does.
    """

    def __init__(
        self,
        *,
        free: int = 5,
        longest: float = 300.0,
        clients: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.free = free
        self.longest = longest
        self.clients = clients
        self._clock = clock
        self._misses: OrderedDict[str, _Misses] = OrderedDict()
        self._lock = threading.Lock()

    def wait(self, client: str) -> float:
        """Seconds ``client`` must still wait before a try is checked (0: it may try now)."""
        with self._lock:
            misses = self._misses.get(client)
            return 0.0 if misses is None else max(0.0, misses.until - self._clock())

    def missed(self, client: str) -> None:
        """Count a wrong credential from ``client``."""
        with self._lock:
            misses = self._misses.pop(client, None) or _Misses()
            misses.count += 1
            if misses.count > self.free:
                delay = min(self.longest, 2.0 ** (misses.count - self.free - 1))
                misses.until = self._clock() + delay
            self._misses[client] = misses
            while len(self._misses) > self.clients:
                self._misses.popitem(last=False)

    def succeeded(self, client: str) -> None:
        """Forget ``client``'s misses."""
        with self._lock:
            self._misses.pop(client, None)


def client_of(scope: Scope) -> str:
    """The address a request came from (the proxy's ``X-Forwarded-For`` once uvicorn trusts it)."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def _host_name(value: str) -> str | None:
    """The host part of a ``Host`` header (``[::1]:8765`` → ``::1``); None when malformed."""
    try:
        parts = urlsplit(f"//{value}")
        _ = parts.port  # a port that is not a number is malformed
    except ValueError:
        return None
    return parts.hostname


def refused(status: int, message: str, **headers: str) -> Response:
    """A refusal in one sentence, as plain text."""
    return PlainTextResponse(message + "\n", status_code=status, headers=headers)


class Gate:
    """The Host and Origin checks and, with a token, the credential check, for one surface.

    ``host`` is the address the surface listens on: on a wildcard address any ``Host`` is
    served (a credential is required there), otherwise only that host and the loopback
    names.  A request with an ``Origin`` from another host is refused whatever its
    credential.  With ``token`` every request under ``protect`` needs ``Authorization:
    Bearer <token>`` (``authorized`` may accept another proof, such as a signed session);
    wrong ones count against the client in ``throttle``.
    """

    def __init__(
        self,
        *,
        host: str,
        token: str | None = None,
        throttle: SignInThrottle | None = None,
        protect: Callable[[str], bool] = lambda path: True,
        authorized: Callable[[Headers], bool] = lambda headers: False,
    ) -> None:
        self.any_host = host in ANY_ADDRESS
        self.hosts = {name.lower() for name in (host.strip("[]"), "127.0.0.1", "::1", "localhost")}
        self.token = token
        self.throttle = throttle or SignInThrottle()
        self.protect = protect
        self.authorized = authorized

    def refusal(self, scope: Scope) -> Response | None:
        """Why this request is refused, as the response to send; None when it may pass."""
        headers = Headers(scope=scope)
        host = _host_name(headers.get("host", ""))
        if host is None or not (self.any_host or host.lower() in self.hosts):
            return refused(421, "this server does not answer to that host name")
        origin = headers.get("origin")
        if origin and not _same_origin(origin, headers.get("host", "")):
            return refused(403, "requests from another site are refused")
        if self.token is None or not self.protect(str(scope.get("path", ""))):
            return None
        return self.credential_refusal(scope, headers)

    def credential_refusal(self, scope: Scope, headers: Headers) -> Response | None:
        """None when the request proves the token; otherwise the refusal (throttled)."""
        if self.authorized(headers):
            return None
        client = client_of(scope)
        wait = self.throttle.wait(client)
        if wait > 0:
            return too_many(wait)
        given = headers.get("authorization", "")
        if given.lower().startswith("bearer ") and self.token is not None:
            if same_secret(given[7:].strip(), self.token):
                self.throttle.succeeded(client)
                return None
            self.throttle.missed(client)
        return refused(
            401, "an access token is required: send Authorization: Bearer <token>",
            **{"WWW-Authenticate": "Bearer"},
        )  # fmt: skip


class Guarded:
    """An ASGI app behind a ``Gate``: refused requests never reach it."""

    def __init__(self, app: ASGIApp, gate: Gate) -> None:
        self.app = app
        self.gate = gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse the request, or pass it on (lifespan events always pass)."""
        if scope["type"] in ("http", "websocket"):
            answer = self.gate.refusal(scope)
            if answer is not None:
                await answer(scope, receive, send)
                return
        await self.app(scope, receive, send)


def too_many(wait: float) -> Response:
    """The answer to a client that must wait before its next sign-in try."""
    seconds = max(1, math.ceil(wait))
    return refused(
        429, f"too many wrong access tokens from this client: try again in {seconds} s",
        **{"Retry-After": str(seconds)},
    )  # fmt: skip


def _same_origin(origin: str, host: str) -> bool:
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host.lower()
