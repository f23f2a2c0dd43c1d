"""The memory browser's web app: server-rendered pages over one deployment's store.

Every page is plain HTML from Jinja2 templates (autoescaped) and reads with JavaScript off;
the only script is the trace page's own, on the ask page.  Every response carries a
Content-Security-Policy that allows the app's own files and nothing inline, so a memory's
text can never run.  Changes (forget, add) are POST forms that carry the process's
same-origin token and are refused from another site; each goes through the store
operations the CLI uses.  Which store and which namespaces are served is fixed when the
process starts: a request can only name a namespace among them, and an unknown query
parameter is refused rather than ignored.

Who may reach it follows ``agent.access``: the Host and Origin checked on every request, and
off loopback an access token, proved once at the sign-in form (throttled per client) and then
by a signed session cookie that never holds the token.  A value a request sends is validated
before use: a mistake is a 4xx page naming the field, and an unexpected failure a 500 page
with the same security headers as every other.  A namespace is named in a request as on every
other surface (``ns=users/maya``; ``agent.memory.items.namespace_named``).
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl, quote, urlencode

from jinja2 import Environment, PackageLoader, select_autoescape
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import ClientDisconnect, Request, cookie_parser
from starlette.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from ripplegraph.agent.context import Deployed
from ripplegraph.agent.errors import NotFoundError, RippleGraphError
from ripplegraph.agent.graph import recall_graph
from ripplegraph.agent.memory import MAX_QUERY_CHARS, MAX_SAID_CHARS
from ripplegraph.agent.memory.ingest_files import parse_date
from ripplegraph.agent.memory.items import labels_of, name_of, stored_namespace
from ripplegraph.agent.services import Services
from ripplegraph.agent.store.transfer import export_records
from ripplegraph.agent.surfaces.access import (
    Gate,
    Signed,
    checked_token,
    device_cookie,
    same_secret,
    too_many,
)
from ripplegraph.agent.surfaces.api import forget_now, recall_state
from ripplegraph.agent.surfaces.langgraph_store import RippleGraphStore, add_said
from ripplegraph.agent.surfaces.trace_page import SCRIPT, STYLE, render_body, state_from
from ripplegraph.agent.surfaces.ui import catalog

CSP = (
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
COOKIE = "ripplegraph_ui"
_STATIC = Path(__file__).with_name("static")
_FILES = {
    "trace.css": (STYLE, "text/css"),
    "trace.js": (SCRIPT, "text/javascript"),
    "ui.css": ((_STATIC / "ui.css").read_text(encoding="utf-8"), "text/css"),
    "icon.svg": ((_STATIC / "icon.svg").read_text(encoding="utf-8"), "image/svg+xml"),
}
_MAX_FORM = 64 * 1024
_MAX_FIELDS = 16
SESSION_HOURS = 12.0
"""How long a sign-in lasts."""
_Q = TypeVar("_Q", bound=BaseModel)
_log = logging.getLogger(__name__)


class Refused(Exception):
    """A request the browser turns away, with the status and the line it shows."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _Query(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class _Page(_Query):
    page: int = Field(1, ge=1, le=1_000_000)


class _Memory(_Query):
    ns: catalog.Name
    id: str = Field(min_length=1, max_length=200)


class _Person(_Query):
    ns: catalog.Name
    name: str = Field(min_length=1, max_length=200)


class _Ask(_Query):
    ns: catalog.Name
    q: str = Field("", max_length=MAX_QUERY_CHARS)


class _Export(_Query):
    ns: catalog.Name


class _Forget(_Memory):
    csrf: str = ""


class _Add(_Query):
    ns: catalog.Name
    text: str = Field(min_length=1, max_length=MAX_SAID_CHARS)
    speaker: str = Field("User", min_length=1, max_length=200)
    session: str = Field("", max_length=200)
    date: str = Field("", max_length=40)
    csrf: str = ""

    @field_validator("date")
    @classmethod
    def _readable(cls, value: str) -> str:
        if value:
            parse_date(value, "date")
        return value


class _Login(_Query):
    token: str = Field(max_length=400)


@dataclass(frozen=True)
class Browser:
    """What one ``ripplegraph ui`` process serves, fixed when it starts."""

    context: Deployed
    gate: Gate
    """Who may reach it: Host, Origin, the token and its throttle (``agent.access``)."""
    sessions: Signed
    """Sign-ins: a signed cookie proves one without holding the token."""
    namespaces: frozenset[str] | None = None
    """The namespaces it may show, as stored (None: every namespace of the store)."""
    access_token: str | None = None
    """When set, every page asks for it first (required off loopback)."""
    csrf: str = ""

    def allowed(self, name: str) -> str:
        """The namespace ``name`` is stored under, if this process serves it and it is held."""
        store = Services(self.context.deployment).store()
        namespace = stored_namespace(labels_of(name), store.known)
        if self.namespaces is not None and namespace not in self.namespaces:
            raise Refused(403, f"namespace {name!r} is not served by this browser")
        if not store.known(namespace):
            raise Refused(404, f"no namespace {name!r} in this store")
        return namespace

    def names(self, offset: int, limit: int) -> list[str]:
        """One page of the namespaces to list (one more than ``limit``: is there a next?)."""
        store = Services(self.context.deployment).store()
        if self.namespaces is None:
            return store.holding_namespaces(None, limit + 1, offset)
        return sorted(n for n in self.namespaces if store.known(n))[offset : offset + limit + 1]


_templates = Environment(
    loader=PackageLoader("ripplegraph.agent.surfaces.ui", "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)


def _link(path: str, **query: Any) -> str:
    """A link to a page with its query (empty values left out)."""
    kept = {k: v for k, v in query.items() if v not in (None, "")}
    return path + ("?" + urlencode(kept) if kept else "")


_templates.globals["link"] = _link


def _parse(model: type[_Q], values: Any) -> _Q:
    try:
        return model.model_validate(dict(values))
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'request'}: {e['msg']}" for e in error.errors()
        )
        raise Refused(400, problems) from error


def _page(browser: Browser, name: str, status: int = 200, **values: Any) -> HTMLResponse:
    html = _templates.get_template(name).render(csrf=browser.csrf, **values)
    return HTMLResponse(html, status_code=status)


Handler = Callable[[Browser, Request], Awaitable[Response]]


def _refused(browser: Browser, status: int, message: str) -> HTMLResponse:
    return _page(browser, "refused.html", status, title="Refused", message=message)


def _failed(browser: Browser, request: Request, error: Exception) -> HTMLResponse:
    """The 500 page: the failure is logged here, the client is told only that it happened."""
    _log.error("%s %s failed", request.method, request.url.path, exc_info=error)
    return _refused(browser, 500, "this request failed inside the browser; the log says why")


def _route(path: str, handler: Handler, browser: Browser, methods: list[str]) -> Route:
    async def endpoint(request: Request) -> Response:
        try:
            return await handler(browser, request)
        except Refused as refused:
            return _refused(browser, refused.status, str(refused))
        except (RippleGraphError, ValueError) as error:
            return _refused(browser, 400, str(error))
        except ClientDisconnect:
            return _refused(browser, 400, "the request ended before its body")
        except Exception as error:
            return _failed(browser, request, error)

    return Route(path, endpoint, methods=methods)


async def _namespaces(browser: Browser, request: Request) -> Response:
    query = _parse(_Page, request.query_params)
    offset = (query.page - 1) * catalog.PAGE
    names = await run_in_threadpool(browser.names, offset, catalog.PAGE)
    rows = await run_in_threadpool(
        catalog.namespace_rows, Services(browser.context.deployment).store(), names[: catalog.PAGE]
    )
    return _page(
        browser,
        "namespaces.html",
        title="Namespaces",
        rows=rows,
        page=query.page,
        more=len(names) > catalog.PAGE,
    )


async def _namespace(browser: Browser, request: Request) -> Response:
    filters = _parse(catalog.Filters, request.query_params)
    namespace = browser.allowed(filters.ns)
    store = Services(browser.context.deployment).store()
    found = await run_in_threadpool(catalog.listing, store, namespace, filters)
    name = name_of(namespace)
    return _page(browser, "namespace.html", title=name, ns=name, f=filters, listing=found)


async def _memory(browser: Browser, request: Request) -> Response:
    query = _parse(_Memory, request.query_params)
    namespace = browser.allowed(query.ns)
    view = await run_in_threadpool(
        catalog.memory_view, Services(browser.context.deployment).store(), namespace, query.id
    )
    if view is None:
        raise Refused(404, f"no memory {query.id!r} in {query.ns!r} (forgotten, or never held)")
    return _page(browser, "memory.html", title="Memory", ns=name_of(namespace), view=view)


async def _person(browser: Browser, request: Request) -> Response:
    query = _parse(_Person, request.query_params)
    namespace = browser.allowed(query.ns)
    view = await run_in_threadpool(
        catalog.person_view, Services(browser.context.deployment).store(), namespace, query.name
    )
    return _page(browser, "person.html", title=query.name, ns=name_of(namespace), view=view)


def _recall(browser: Browser, namespace: str, question: str) -> tuple[Any, str]:
    """Run the recall graph once; its final state and the trace page's content for it."""
    state = state_from(recall_state(question, namespace, browser.context))
    return state, render_body(state, recall_graph.get_graph())


async def _ask(browser: Browser, request: Request) -> Response:
    query = _parse(_Ask, request.query_params)
    namespace = browser.allowed(query.ns)
    state, trace = None, ""
    if query.q:
        state, trace = await run_in_threadpool(_recall, browser, namespace, query.q)
    name = name_of(namespace)
    return _page(browser, "ask.html", title="Ask", ns=name, q=query.q, state=state, trace=trace)


async def _confirm_forget(browser: Browser, request: Request) -> Response:
    query = _parse(_Memory, request.query_params)
    namespace = browser.allowed(query.ns)
    unit = Services(browser.context.deployment).store().get(namespace, [query.id]).get(query.id)
    if unit is None:
        raise Refused(404, f"no memory {query.id!r} in {query.ns!r}")
    return _page(browser, "forget.html", title="Forget", ns=name_of(namespace), unit=unit)


async def _form(request: Request) -> dict[str, Any]:
    """A URL-encoded form, counted as it arrives.

    A body past ``_MAX_FORM`` is refused whatever its ``Content-Length`` says, or whether it
    says anything (a chunked body).
    """
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise Refused(415, "a form must be sent as application/x-www-form-urlencoded")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > _MAX_FORM:
            raise Refused(413, f"the form is larger than {_MAX_FORM // 1024} KB")
    try:
        pairs = parse_qsl(
            bytes(body).decode("utf-8"), keep_blank_values=True, max_num_fields=_MAX_FIELDS
        )
    except UnicodeDecodeError as error:
        raise Refused(400, "the form is not UTF-8") from error
    except ValueError as error:
        raise Refused(400, f"the form has more than {_MAX_FIELDS} fields") from error
    return dict(pairs)


def _checked(browser: Browser, token: str) -> None:
    if not same_secret(token, browser.csrf):
        raise Refused(403, "this form did not come from this browser's page (token mismatch)")


async def _forget(browser: Browser, request: Request) -> Response:
    query = _parse(_Forget, await _form(request))
    _checked(browser, query.csrf)
    namespace = browser.allowed(query.ns)
    try:
        await run_in_threadpool(forget_now, browser.context, namespace, memory_ids=[query.id])
    except NotFoundError as error:
        raise Refused(404, str(error)) from error
    done = _link("/namespace", ns=name_of(namespace), done="forgot")
    return RedirectResponse(done, status_code=303)


async def _add(browser: Browser, request: Request) -> Response:
    query = _parse(_Add, await _form(request))
    _checked(browser, query.csrf)
    namespace = browser.allowed(query.ns)
    items = RippleGraphStore(deployment=browser.context.deployment, context=browser.context)
    key = await run_in_threadpool(
        add_said,
        items,
        namespace,
        query.text,
        speaker=query.speaker,
        session=query.session or None,
        date=query.date or None,
    )
    (item,) = Services(browser.context.deployment).store().items(namespace, [key])
    target = item.unit_ids[0] if item.unit_ids else ""
    return RedirectResponse(_link("/memory", ns=name_of(namespace), id=target), status_code=303)


async def _export(browser: Browser, request: Request) -> Response:
    query = _parse(_Export, request.query_params)
    namespace = browser.allowed(query.ns)
    store = Services(browser.context.deployment).store()

    def lines() -> Iterator[str]:
        for record in export_records(store, namespace):
            yield json.dumps(record, ensure_ascii=False) + "\n"

    return StreamingResponse(
        lines(),
        media_type="application/x-ndjson",
        headers={"Content-Disposition": attachment(f"{name_of(namespace)}.jsonl")},
    )


def attachment(name: str) -> str:
    """A Content-Disposition for a download named ``name`` (RFC 6266).

    An ASCII fallback for old clients and the exact name in UTF-8, so any namespace downloads
    under its own name.
    """
    fallback = "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in name)
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"


async def _static(browser: Browser, request: Request) -> Response:
    found = _FILES.get(request.path_params["name"])
    if found is None:
        raise Refused(404, "no such file")
    text, media = found
    return Response(text, media_type=media, headers={"Cache-Control": "max-age=3600"})


async def _login_page(browser: Browser, request: Request) -> Response:
    _parse(_Query, request.query_params)
    return _page(browser, "login.html", title="Sign in", failed=False)


async def _login(browser: Browser, request: Request) -> Response:
    """Sign in with the access token: throttled before the form is read and as it is checked."""
    gate = browser.gate
    wait = gate.throttle.wait(gate.client(request.scope, request.headers))
    if wait > 0:
        return too_many(wait)
    query = _parse(_Login, await _form(request))
    refusal = gate.proves(request.scope, request.headers, query.token)
    if refusal is not None and refusal.status_code == 429:
        return refusal
    if refusal is not None or browser.access_token is None:
        return _page(browser, "login.html", 403, title="Sign in", failed=True)
    response = RedirectResponse("/", status_code=303)
    secure = request.url.scheme == "https"
    response.set_cookie(
        COOKIE,
        browser.sessions.issue(),
        max_age=int(browser.sessions.seconds),
        httponly=True,
        samesite="strict",
        secure=secure,
    )
    device = gate.new_device(request.headers)
    if device is not None:
        response.headers.append("set-cookie", device_cookie(device, secure))
    return response


def _same_site(request: Request, access: Gate) -> bool:
    """Whether a change comes from this app's own pages (not a cross-site form post).

    A browser says so (``Sec-Fetch-Site``), or, where it does not, its ``Origin`` does.
    """
    fetched = request.headers.get("sec-fetch-site")
    if fetched is not None:
        return fetched in ("same-origin", "none")
    origin = request.headers.get("origin")
    return origin is None or access.own_origin(origin, request.headers)


def _guard(browser: Browser, access: Gate) -> Callable[..., Awaitable[Response]]:
    async def dispatch(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        path = request.url.path
        refusal = access.refusal(request.scope)
        response: Response
        if refusal is not None:
            response = refusal
        elif request.method == "POST" and not _same_site(request, access):
            response = _refused(browser, 403, "cross-site request")
        elif path == "/login" or path.startswith("/static/") or browser.access_token is None:
            response = await _next(browser, request, call_next)
        else:
            signed = access.credential_refusal(request.scope, request.headers)
            if signed is None:
                response = await _next(browser, request, call_next)
                if "authorization" in request.headers:  # the token itself, not a session
                    device = access.new_device(request.headers)
                    if device is not None:
                        secure = request.url.scheme == "https"
                        response.headers.append("set-cookie", device_cookie(device, secure))
            elif "authorization" in request.headers or signed.status_code == 429:
                response = signed
            else:
                response = RedirectResponse("/login", status_code=303)
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "same-origin"
        response.headers["X-Frame-Options"] = "DENY"
        return response

    return dispatch


async def _next(
    browser: Browser, request: Request, call_next: Callable[[Request], Awaitable[Response]]
) -> Response:
    try:
        return await call_next(request)
    except Exception as error:
        return _failed(browser, request, error)


def create_app(
    context: Deployed,
    *,
    namespaces: frozenset[str] | None = None,
    access_token: str | None = None,
    host: str = "127.0.0.1",
    public_url: str | None = None,
) -> Starlette:
    """The browser over ``context``'s store: loopback unless ``host`` says otherwise.

    Off loopback it needs ``access_token`` (``ripplegraph ui`` refuses to start without one
    that passes ``agent.access.checked_token``).  Behind a reverse proxy, ``public_url`` is
    the address people reach it at: its host is answered and its origin is the browser's own.
    """
    access_token = checked_token(host, access_token)
    sessions = Signed(SESSION_HOURS * 3600.0)

    def session(headers: Any) -> bool:
        cookie = cookie_parser(headers.get("cookie", "")).get(COOKIE, "")
        return bool(cookie) and sessions.nonce(cookie) is not None

    access = Gate(
        host=host,
        token=access_token,
        protect=lambda path: False,  # the pages ask for sign-in themselves (``_guard``)
        authorized=session,
        public_url=public_url,
    )
    browser = Browser(
        context, access, sessions, namespaces, access_token, secrets.token_urlsafe(32)
    )
    pages: list[tuple[str, Handler, list[str]]] = [
        ("/", _namespaces, ["GET"]),
        ("/namespace", _namespace, ["GET"]),
        ("/memory", _memory, ["GET"]),
        ("/person", _person, ["GET"]),
        ("/ask", _ask, ["GET"]),
        ("/forget", _confirm_forget, ["GET"]),
        ("/forget", _forget, ["POST"]),
        ("/add", _add, ["POST"]),
        ("/export", _export, ["GET"]),
        ("/login", _login_page, ["GET"]),
        ("/login", _login, ["POST"]),
        ("/static/{name}", _static, ["GET"]),
    ]
    return Starlette(
        routes=[_route(path, handler, browser, methods) for path, handler, methods in pages],
        middleware=[Middleware(BaseHTTPMiddleware, dispatch=_guard(browser, access))],
    )
