"""``ripplegraph mcp`` driven by the official MCP client, over stdio and streamable HTTP."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from ripplegraph.agent.surfaces.api import remember
from ripplegraph.studio import demo_sessions
from tests.conftest import OFFLINE, RIPPLEGRAPH, deployed, free_port

pytestmark = pytest.mark.integration
HARBOR = "Should we go to Harbor Grill for Maya's birthday dinner?"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A store whose ``alex`` namespace holds the demo history (the Harbor Grill scenario)."""
    directory = tmp_path / "store"
    remember(demo_sessions(), "alex", deployed(store_dir=str(directory)))
    return directory


async def exercise(server: Any) -> dict[str, Any]:
    """List the tools, recall, forget the allergy, recall again, remember and recall that."""
    async with Client(server) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        first = (await client.call_tool("recall", {"query": HARBOR})).structured_content
        allergy = next(m for m in first["memories"] if "allergic to seafood" in m["memory"])
        forgot = await client.call_tool("forget", {"memory_id": allergy["id"]})
        after = (await client.call_tool("recall", {"query": HARBOR})).structured_content
        added = await client.call_tool("remember", {"text": "Maya is vegan since June."})
        vegan = (
            await client.call_tool("recall", {"query": "What does Maya eat?"})
        ).structured_content
    return {
        "tools": tools,
        "first": first,
        "forgot": forgot,
        "after": after,
        "added": added,
        "vegan": vegan,
    }


def check(seen: dict[str, Any]) -> None:
    tools = seen["tools"]
    assert set(tools) == {"recall", "remember", "forget"}
    assert tools["recall"].annotations.read_only_hint is True
    assert tools["forget"].annotations.destructive_hint is True
    assert all("namespace" not in t.input_schema.get("properties", {}) for t in tools.values())
    assert "allergic to seafood" in seen["first"]["context"]
    assert not seen["forgot"].is_error
    assert "allergic to seafood" not in seen["after"]["context"]
    added_id = seen["added"].content[0].text
    assert any(m["id"] == added_id for m in seen["vegan"]["memories"])


def test_over_stdio_recall_finds_the_allergy_and_forget_removes_it(store: Path) -> None:
    server = StdioServerParameters(
        command=RIPPLEGRAPH,
        args=["mcp", "--namespace", "alex", "--store", str(store), "--speaker", "Maya"],
        env=OFFLINE,
    )
    check(asyncio.run(exercise(server)))


def wait_for_port(port: int, timeout: float, process: subprocess.Popen[bytes]) -> None:
    """Until the server accepts connections (its endpoint refuses a bare GET)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, f"the server exited with {process.returncode}"
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.3)
    raise RuntimeError(f"nothing listened on port {port} within {timeout:.0f} s")


@pytest.fixture
def http_server(store: Path, tmp_path: Path) -> Iterator[str]:
    port = free_port()
    log = (tmp_path / "mcp.log").open("wb")
    serve = ["mcp", "--transport", "streamable-http", "--port", str(port)]
    process = subprocess.Popen(
        [RIPPLEGRAPH, *serve, "--namespace", "alex", "--store", str(store)],
        env={**os.environ, **OFFLINE},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for_port(port, 120, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def test_over_streamable_http_on_loopback(http_server: str) -> None:
    check(asyncio.run(exercise(http_server)))
