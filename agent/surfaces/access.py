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
  A client is the address a request came from (a proxy's ``X-Forwarded-For`` only when the
  operator names that proxy: ``--trusted-proxy``), except for a device that proved the token
  before: its signed device cookie (``Signed``) makes it a client of its own, so a stranger
  guessing from a shared address never locks it out.  A try is checked only while its
  client is not waiting, at the moment it is compared (not when its body began to arrive).
- **Behind a reverse proxy** the operator names the public URL (``--public-url``): its host
  is answered and its origin is this surface's own.

``Gate`` decides the Host, Origin and bearer parts and ``Guarded`` puts any ASGI app behind
one; the browser asks its gate from its own middleware and adds a sign-in form (a signed
session cookie) on top.
"""

from __future__ import annotations

import hashlib
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

from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import cookie_parser
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ripplegraph.agent.errors import RippleGraphError

MIN_TOKEN_CHARS = 24
"""The shortest access token a surface accepts."""
MIN_TOKEN_DISTINCT = 10
"""The fewest distinct characters it must hold (``aaaa…`` is long but guessable)."""
LOOPBACK_NAMES = ("localhost",)
ANY_ADDRESS = ("0.0.0.0", "::", "")
DEVICE_COOKIE = "ripplegraph_device"
"""The cookie a client that proved the token carries: its own throttle, not its address's."""
DEVICE_DAYS = 30.0
"""How long a device stays known after it last proved the token."""


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


def public_origin(url: str) -> tuple[str, str]:
    """The host name and origin of the URL a reverse proxy serves a surface at.

    ``https://memory.example.com/`` → ``("memory.example.com", "https://memory.example.com")``;
    anything but an http(s) URL with a host is refused (``AccessError``).
    """
    parts = urlsplit(url.strip())
    try:
        port = parts.port
    except ValueError:
        port = -1
    if parts.scheme not in ("http", "https") or not parts.hostname or port == -1:
        raise AccessError(f"--public-url must be http(s)://host[:port], not {url!r}")
    return parts.hostname.lower(), f"{parts.scheme}://{parts.netloc.lower()}"


class Signed:
    """Values signed with a key drawn when the process starts: ``<expiry>.<nonce>.<sig>``.

    Nothing is stored per value, so memory stays flat whatever clients do, and a restart
    makes every value void (sessions sign in again, devices count as addresses again).
    """

    def __init__(self, seconds: float) -> None:
        self._key = secrets.token_bytes(32)
        self.seconds = seconds

    def _signature(self, body: str) -> str:
        return hmac.new(self._key, body.encode(), hashlib.sha256).hexdigest()

    def issue(self) -> str:
        """A new value, valid for ``seconds``."""
        body = f"{int(time.time() + self.seconds)}.{secrets.token_urlsafe(16)}"
        return f"{body}.{self._signature(body)}"

    def nonce(self, value: str) -> str | None:
        """The nonce of a value this process issued that has not expired; else None."""
        body, _, signature = value.rpartition(".")
        expiry, _, nonce = body.partition(".")
        if not (nonce and expiry.isdigit() and same_secret(signature, self._signature(body))):
            return None
        return nonce if int(expiry) > time.time() else None


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
    """The address a request came from (a named proxy's ``X-Forwarded-For``: uvicorn's part)."""
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
    served (a credential is required there), otherwise only that host, the loopback names
    and ``public_url``'s host.  A request with an ``Origin`` other than its own host's or
    ``public_url``'s is refused whatever its credential.  With ``token`` every request under
    ``protect`` needs ``Authorization: Bearer <token>`` (``authorized`` may accept another
    proof, such as a signed session); wrong ones count against the client in ``throttle``.
    """

    def __init__(
        self,
        *,
        host: str,
        token: str | None = None,
        throttle: SignInThrottle | None = None,
        protect: Callable[[str], bool] = lambda path: True,
        authorized: Callable[[Headers], bool] = lambda headers: False,
        public_url: str | None = None,
    ) -> None:
        self.any_host = host in ANY_ADDRESS
        self.hosts = {name.lower() for name in (host.strip("[]"), "127.0.0.1", "::1", "localhost")}
        self.origins: set[str] = set()
        if public_url is not None:
            public_host, origin = public_origin(public_url)
            self.hosts.add(public_host)
            self.origins.add(origin)
        self.token = token
        self.throttle = throttle or SignInThrottle()
        self.protect = protect
        self.authorized = authorized
        self.devices = Signed(DEVICE_DAYS * 86_400.0)

    def refusal(self, scope: Scope) -> Response | None:
        """Why this request is refused, as the response to send; None when it may pass."""
        headers = Headers(scope=scope)
        host = _host_name(headers.get("host", ""))
        if host is None or not (self.any_host or host.lower() in self.hosts):
            return refused(421, "this server does not answer to that host name")
        origin = headers.get("origin")
        if origin and not self.own_origin(origin, headers):
            return refused(403, "requests from another site are refused")
        if self.token is None or not self.protect(str(scope.get("path", ""))):
            return None
        return self.credential_refusal(scope, headers)

    def own_origin(self, origin: str, headers: Headers) -> bool:
        """Whether ``origin`` is this surface's: its request's own host, or the public URL's."""
        return _same_origin(origin, headers.get("host", "")) or origin.lower() in self.origins

    def client(self, scope: Scope, headers: Headers) -> str:
        """Whom a wrong credential counts against: a known device, else an address."""
        cookie = cookie_parser(headers.get("cookie", "")).get(DEVICE_COOKIE, "")
        device = self.devices.nonce(cookie) if cookie else None
        return f"device {device}" if device else f"address {client_of(scope)}"

    def new_device(self, headers: Headers) -> str | None:
        """A device cookie for a request that just proved the token, unless it holds one."""
        cookie = cookie_parser(headers.get("cookie", "")).get(DEVICE_COOKIE, "")
        if cookie and self.devices.nonce(cookie):
            return None
        return self.devices.issue()

    def proves(self, scope: Scope, headers: Headers, given: str) -> Response | None:
        """Check ``given`` against the token: None when it is right, else the refusal.

        The client's wait is read at the moment of the comparison, with nothing awaited
        in between, so tries that arrived together are checked one at a time.
        """
        client = self.client(scope, headers)
        wait = self.throttle.wait(client)
        if wait > 0:
            return too_many(wait)
        if self.token is not None and same_secret(given, self.token):
            if client.startswith("device "):  # an address's misses stay with the address
                self.throttle.succeeded(client)
            return None
        self.throttle.missed(client)
        return refused(
            401, "an access token is required: send Authorization: Bearer <token>",
            **{"WWW-Authenticate": "Bearer"},
        )  # fmt: skip

    def credential_refusal(self, scope: Scope, headers: Headers) -> Response | None:
        """None when the request proves the token; otherwise the refusal (throttled)."""
        if self.authorized(headers):
            return None
        given = headers.get("authorization", "")
        if not given.lower().startswith("bearer "):
            wait = self.throttle.wait(self.client(scope, headers))
            if wait > 0:
                return too_many(wait)
            return refused(
                401, "an access token is required: send Authorization: Bearer <token>",
                **{"WWW-Authenticate": "Bearer"},
            )  # fmt: skip
        return self.proves(scope, headers, given[7:].strip())


def with_device(send: Send, cookie: str, secure: bool) -> Send:
    """``send`` with the device cookie set on the response it starts."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            headers.append("set-cookie", device_cookie(cookie, secure))
        await send(message)

    return sending


def device_cookie(value: str, secure: bool) -> str:
    """The ``Set-Cookie`` value of a device cookie (HttpOnly, SameSite=Strict)."""
    flags = "; Secure" if secure else ""
    seconds = int(DEVICE_DAYS * 86_400)
    return f"{DEVICE_COOKIE}={value}; Max-Age={seconds}; Path=/; HttpOnly; SameSite=Strict{flags}"


class Guarded:
    """An ASGI app behind a ``Gate``: refused requests never reach it."""

    def __init__(self, app: ASGIApp, gate: Gate) -> None:
        self.app = app
        self.gate = gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse the request, or pass it on (lifespan events always pass).

        A request that proved the token without a device cookie is given one.
        """
        if scope["type"] in ("http", "websocket"):
            answer = self.gate.refusal(scope)
            if answer is not None:
                await answer(scope, receive, send)
                return
            guarded = self.gate.protect(str(scope.get("path", "")))
            if self.gate.token is not None and guarded and scope["type"] == "http":
                cookie = self.gate.new_device(Headers(scope=scope))
                if cookie is not None:
                    send = with_device(send, cookie, scope.get("scheme") == "https")
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
