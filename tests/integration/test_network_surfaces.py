"""Every network surface under one rule, attacked over real servers (issue: served safely).

``ripplegraph ui`` and ``ripplegraph mcp --transport streamable-http`` run as real uvicorn
processes; requests come from httpx and from the MCP SDK's own client.  On loopback the Host
and Origin are checked; off loopback a strong credential is required before the process
starts; wrong credentials are throttled per client; the browser's cookie is a signed session;
inputs that used to answer 500 answer 4xx with one sentence.
"""

from __future__ import annotations

import asyncio
import http.client
import os
import re
import subprocess
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from ripplegraph.agent.cli import app
from ripplegraph.studio import DEMO_NAMESPACE, demo_sessions
from tests.conftest import OFFLINE, RIPPLEGRAPH, deployed, free_port, wait_for_http
from tests.integration.conftest import ingest
from tests.integration.test_mcp import wait_for_port

pytestmark = pytest.mark.integration
TOKEN = "Wq7-pX2m-Lr9v-Kd4s-Tn8b-Hc3z"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with the demo, and namespaces whose names are not ASCII."""
    directory = tmp_path_factory.mktemp("surfaces") / "store"
    context = deployed(store_dir=str(directory))
    ingest(context, DEMO_NAMESPACE, demo_sessions())
    for name in ("日本", "café"):
        ingest(context, name, demo_sessions()[:1])
    return directory


@contextmanager
def serving(args: list[str], url: str, log: Path, *, page: bool = True) -> Iterator[str]:
    """``ripplegraph ARGS`` until the block ends; yields ``url`` once it answers.

    A browser is ready when its first page answers; an MCP server (``page=False``), which
    has no page to ask, when its port takes connections.
    """
    with log.open("wb") as out:
        process = subprocess.Popen(
            [RIPPLEGRAPH, *args], env={**os.environ, **OFFLINE}, stdout=out, stderr=out
        )
        try:
            if page:
                wait_for_http(url + "/", 120, process)
            else:
                wait_for_port(int(url.rsplit(":", 1)[1]), 120, process)
            yield url
        finally:
            process.terminate()
            process.wait(timeout=30)


def off_loopback(store: Path, port: int, *extra: str) -> list[str]:
    """``ripplegraph ui`` on every address of the machine, with the suite's access token."""
    return ["ui", "--store", str(store), "--host", "0.0.0.0", "--port", str(port),
            "--access-token", TOKEN, *extra]  # fmt: skip


# --- starting off loopback ------------------------------------------------------------------


@pytest.mark.parametrize("verb", [["ui"], ["mcp", "-n", "demo", "--transport", "streamable-http"]])
@pytest.mark.parametrize(
    "token", [None, "a", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "short-but-varied"]
)
def test_off_loopback_a_surface_refuses_to_start_without_a_strong_credential(
    verb: list[str], token: str | None, tmp_path: Path
) -> None:
    given = ["--access-token", token] if token is not None else []
    result = CliRunner().invoke(
        app, [*verb, "--store", str(tmp_path), "--host", "0.0.0.0", *given], env={}
    )
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: ") and result.output.count("\n") == 1
    assert "--access-token" in result.output
    offered = re.search(r"generated now: ([A-Za-z0-9_-]{40,})", result.output)
    assert offered, "a strong token is offered in the refusal"
    assert not (tmp_path / "graph.sqlite").exists(), "refused before opening the store"


# --- the browser ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser_off_loopback(store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``ripplegraph ui`` on every address with an access token, reached over 127.0.0.1."""
    port = free_port()
    log = tmp_path_factory.mktemp("ui") / "ui.log"
    with serving(off_loopback(store, port), f"http://127.0.0.1:{port}", log) as url:
        yield url


def test_wrong_tokens_are_throttled_and_the_right_one_waits_its_turn(
    browser_off_loopback: str,
) -> None:
    url = browser_off_loopback
    with httpx.Client(base_url=url, follow_redirects=False) as client:
        answers = [client.post("/login", data={"token": f"guess-{n}"}) for n in range(200)]
        statuses = [a.status_code for a in answers]
        assert statuses[:6] == [403] * 6, "five free misses, and the one that starts the wait"
        assert statuses.count(429) >= 190, "the rest are throttled unheard"
        assert int(answers[-1].headers["retry-after"]) >= 1
        blocked = client.post("/login", data={"token": TOKEN})
        assert blocked.status_code == 429, "while throttled even the right token is not heard"
        bearer = client.get("/", headers={"Authorization": f"Bearer {TOKEN}x"})
        assert bearer.status_code == 429, "the bearer header shares the client's throttle"


def test_a_forwarded_address_is_believed_only_from_a_named_proxy(
    store: Path, tmp_path: Path
) -> None:
    for trusted in ([], ["--trusted-proxy", "127.0.0.1"]):
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        with (
            serving(off_loopback(store, port, *trusted), url, tmp_path / "ui.log"),
            httpx.Client(base_url=url) as client,
        ):
            statuses = [
                client.post(
                    "/login", data={"token": f"guess-{n}"},
                    headers={"X-Forwarded-For": f"10.0.{n // 250}.{n % 250}"},
                ).status_code
                for n in range(200)
            ]  # fmt: skip
        if trusted:  # each forwarded address is a client of its own: each first miss is heard
            assert statuses == [403] * 200
        else:  # one client, whatever it claims
            assert statuses[:6] == [403] * 6 and statuses.count(429) == 194


def test_tries_sent_together_with_slow_bodies_are_checked_one_at_a_time(
    store: Path, tmp_path: Path
) -> None:
    port = free_port()
    args = off_loopback(store, port)

    async def slow_tries(count: int) -> list[int]:
        opened = [await asyncio.open_connection("127.0.0.1", port) for _ in range(count)]
        for n, (_, writer) in enumerate(opened):
            body = f"token=guess-{n:04d}".encode()
            writer.write(
                b"POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/x-www-form-urlencoded\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body[:5]
            )
            await writer.drain()
        await asyncio.sleep(1.0)  # every try has passed the first look at the wait
        for n, (_, writer) in enumerate(opened):
            writer.write(f"token=guess-{n:04d}".encode()[5:])
            await writer.drain()
        statuses = []
        for reader, writer in opened:
            line = await reader.readline()
            statuses.append(int(line.split()[1]))
            writer.close()
        return statuses

    with serving(args, f"http://127.0.0.1:{port}", tmp_path / "ui.log"):
        statuses = asyncio.run(slow_tries(100))
    assert statuses.count(403) == 6, "the five free misses and the one that starts the wait"
    assert statuses.count(429) == 94


def test_a_client_that_proved_the_token_is_never_locked_out_by_another(
    store: Path, tmp_path: Path
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with (
        serving(off_loopback(store, port), url, tmp_path / "ui.log"),
        httpx.Client(base_url=url, follow_redirects=False) as owner,
        httpx.Client(base_url=url, follow_redirects=False) as guesser,
    ):
        assert owner.post("/login", data={"token": TOKEN}).status_code == 303
        assert "ripplegraph_device" in owner.cookies
        owner.cookies.delete("ripplegraph_ui")  # the session ends; the device stays known
        for n in range(20):  # same address, no device cookie
            guesser.post("/login", data={"token": f"guess-{n}"})
        assert guesser.post("/login", data={"token": TOKEN}).status_code == 429
        assert owner.post("/login", data={"token": "a typo"}).status_code == 403, "its own count"
        assert owner.post("/login", data={"token": TOKEN}).status_code == 303
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        assert owner.get("/", headers=bearer).status_code == 200
        forged = {"Cookie": "ripplegraph_device=9999999999.x.0f"}
        assert guesser.post("/login", data={"token": TOKEN}, headers=forged).status_code == 429


def test_an_mcp_client_that_proved_the_token_is_never_locked_out(
    store: Path, tmp_path: Path
) -> None:
    port = free_port()
    args = ["mcp", "-n", DEMO_NAMESPACE, "--store", str(store), "--transport", "streamable-http",
            "--host", "0.0.0.0", "--port", str(port), "--access-token", TOKEN]  # fmt: skip
    url = f"http://127.0.0.1:{port}/mcp"
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}"}
    wrong = {**MCP_HEADERS, "Authorization": "Bearer not-the-token"}
    with (
        serving(args, f"http://127.0.0.1:{port}", tmp_path / "mcp.log", page=False),
        httpx.Client() as owner,
        httpx.Client() as guesser,
    ):
        assert owner.post(url, json=INITIALIZE, headers=headers).status_code == 200
        assert "ripplegraph_device" in owner.cookies
        for _ in range(20):
            guesser.post(url, json=INITIALIZE, headers=wrong)
        assert guesser.post(url, json=INITIALIZE, headers=headers).status_code == 429
        assert owner.post(url, json=INITIALIZE, headers=headers).status_code == 200


def test_the_cookie_is_a_signed_session_secure_behind_tls(store: Path, tmp_path: Path) -> None:
    # A fresh process: the throttle of the test above is per process and per client.  Its
    # proxy is named: only then is the scheme it forwards believed.
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with (
        serving(
            off_loopback(store, port, "--trusted-proxy", "127.0.0.1"), url, tmp_path / "ui.log"
        ),
        httpx.Client(base_url=url, follow_redirects=False) as client,
    ):
        assert client.get("/").headers["location"] == "/login"
        signed = client.post("/login", data={"token": TOKEN})
        assert signed.status_code == 303
        cookie = signed.headers["set-cookie"]
        assert TOKEN not in cookie and "httponly" in cookie.lower()
        assert "secure" not in cookie.lower(), "plain HTTP on loopback: no Secure flag"
        assert client.get("/").status_code == 200
        forged = re.sub(r"=([^;.]+)\.", "=9999999999.", cookie.split(";")[0])
        client.cookies.clear()
        assert client.get("/", headers={"Cookie": forged}).status_code == 303
        # A TLS-terminating proxy on this machine says the scheme was https.
        behind = client.post(
            "/login", data={"token": TOKEN}, headers={"X-Forwarded-Proto": "https"}
        )
        assert "secure" in behind.headers["set-cookie"].lower()


def test_on_loopback_host_and_origin_are_checked_and_ipv6_serves_its_own_url(
    store: Path, tmp_path: Path
) -> None:
    port = free_port()
    args = ["ui", "--store", str(store), "--host", "::1", "--port", str(port)]
    with serving(args, f"http://[::1]:{port}", tmp_path / "ui.log") as url:
        assert httpx.get(url + "/").status_code == 200
        assert httpx.get(url + "/", headers={"Host": "evil.example"}).status_code == 421
        assert httpx.get(url + "/", headers={"Host": f"evil.example:{port}"}).status_code == 421
        foreign = {"Origin": "http://evil.example"}
        assert httpx.get(url + "/", headers=foreign).status_code == 403


@pytest.fixture(scope="module")
def browser(store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``ripplegraph ui`` on loopback over the store."""
    port = free_port()
    log = tmp_path_factory.mktemp("ui-loopback") / "ui.log"
    args = ["ui", "--store", str(store), "--port", str(port)]
    with serving(args, f"http://127.0.0.1:{port}", log) as url:
        yield url


def csrf(url: str) -> str:
    page = httpx.get(url + f"/namespace?ns={DEMO_NAMESPACE}").text
    return re.findall(r'name="csrf" value="([^"]+)"', page)[0]


@pytest.mark.parametrize(
    "date", ["2024-02-30", "9999-12-31T23:59:59", "1e400", "0000-01-01", "tomorrowish-ish"]
)
def test_a_date_the_browser_cannot_read_is_a_400_naming_the_field(browser: str, date: str) -> None:
    form = {"ns": DEMO_NAMESPACE, "text": "A dated note.", "date": date, "csrf": csrf(browser)}
    answer = httpx.post(browser + "/add", data=form)
    assert answer.status_code == 400, answer.text
    assert "date" in answer.text
    assert answer.headers["content-security-policy"].startswith("default-src 'none'")


@pytest.mark.parametrize(("name", "ascii_name"), [("日本", "__"), ("café", "caf_")])
def test_any_namespace_exports_under_its_own_name(browser: str, name: str, ascii_name: str) -> None:
    answer = httpx.get(browser + "/export", params={"ns": name})
    assert answer.status_code == 200
    disposition = answer.headers["content-disposition"]
    assert f'filename="{ascii_name}.jsonl"' in disposition
    encoded = disposition.split("UTF-8''")[1]
    assert urllib.parse.unquote(encoded) == f"{name}.jsonl"


def test_a_form_past_the_limit_is_refused_even_when_chunked(browser: str) -> None:
    host, port = browser.removeprefix("http://").split(":")
    body = f"ns={DEMO_NAMESPACE}&csrf={csrf(browser)}&text=" + "x" * 200_000
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        chunks = (body[i : i + 8192].encode() for i in range(0, len(body), 8192))
        connection.request(
            "POST", "/add", body=chunks, encode_chunked=True,
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )  # fmt: skip
        answer = connection.getresponse()
        assert answer.status == 413
    finally:
        connection.close()


def test_a_failure_inside_is_a_500_page_with_the_security_headers(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from starlette.testclient import TestClient

    from ripplegraph.agent.surfaces.ui import app as ui_app
    from ripplegraph.agent.surfaces.ui import create_app

    def broken(*args: Any) -> Any:
        raise RuntimeError("a bug with a secret inside: sk-inner")

    monkeypatch.setattr(ui_app.catalog, "listing", broken)
    client = TestClient(
        create_app(deployed(store_dir=str(store))),
        base_url="http://127.0.0.1:8765",
        raise_server_exceptions=False,
    )
    answer = client.get(f"/namespace?ns={DEMO_NAMESPACE}")
    assert answer.status_code == 500
    assert "sk-inner" not in answer.text
    assert answer.headers["content-security-policy"].startswith("default-src 'none'")
    assert answer.headers["x-frame-options"] == "DENY"


# --- MCP over HTTP --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mcp_off_loopback(store: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("mcp") / "mcp.log"
    args = [
        "mcp", "-n", DEMO_NAMESPACE, "--store", str(store), "--transport", "streamable-http",
        "--host", "0.0.0.0", "--port", str(port), "--access-token", TOKEN,
    ]  # fmt: skip
    with serving(args, f"http://127.0.0.1:{port}", log, page=False) as url:
        yield url + "/mcp"


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "attacker", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def test_mcp_off_loopback_needs_the_token_and_refuses_other_sites(mcp_off_loopback: str) -> None:
    port = mcp_off_loopback.split(":")[2].split("/")[0]
    evil = {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}
    refused = httpx.post(mcp_off_loopback, json=INITIALIZE, headers={**MCP_HEADERS, **evil})
    assert refused.status_code == 401
    wrong = httpx.post(
        mcp_off_loopback, json=INITIALIZE,
        headers={**MCP_HEADERS, "Authorization": "Bearer not-the-token"},
    )  # fmt: skip
    assert wrong.status_code == 401
    cross = httpx.post(
        mcp_off_loopback, json=INITIALIZE,
        headers={**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}", "Origin": "http://evil.example"},
    )  # fmt: skip
    assert cross.status_code == 403
    fine = httpx.post(
        mcp_off_loopback,
        json=INITIALIZE,
        headers={**MCP_HEADERS, "Authorization": f"Bearer {TOKEN}"},
    )
    assert fine.status_code == 200


async def tool_calls(url: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    signed = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120)
    async with signed as http, Client(streamable_http_client(url, http_client=http)) as client:
        return [await client.call_tool(name, args) for name, args in calls]


def test_mcp_refusals_reach_the_client_in_their_own_words(mcp_off_loopback: str) -> None:
    calls = [
        ("recall", {"query": ""}),
        ("recall", {"query": "q" * 10_001}),
        ("remember", {"text": "x" * 1_000_001}),
        ("remember", {"text": "   "}),
        ("forget", {"memory_id": "no-such-memory"}),
        ("recall", {"query": "Should we go to Harbor Grill for Maya's birthday?"}),
    ]
    answers = asyncio.run(tool_calls(mcp_off_loopback, calls))
    said = [a.content[0].text for a in answers]
    assert [a.is_error for a in answers] == [True] * 5 + [False]
    assert "the query is empty" in said[0]
    assert "at most 10,000" in said[1]
    assert "at most 1,000,000" in said[2]
    assert "nothing to remember" in said[3]
    assert "no memory 'no-such-memory'" in said[4]
    assert "allergic to seafood" in answers[5].structured_content["context"]
