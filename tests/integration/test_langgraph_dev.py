"""`langgraph dev` on loopback, driven by the real `langgraph-sdk` client."""

from __future__ import annotations

import itertools
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_sync_client

from agent.context import Context
from agent.graph import recall_graph
from studio import DEMO_NAMESPACE

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
HARBOR = "Should we go to Harbor Grill for Maya's birthday dinner?"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(demo_context: Context, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("langgraph") / "server.log"
    env = {
        **os.environ,
        "RIPPLEGRAPH_STORE": demo_context.store_dir,
        "RIPPLEGRAPH_CHROMA_URL": demo_context.chroma_url or "",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "LANGSMITH_TRACING": "false",
    }
    command = [
        str(Path(sys.executable).parent / "langgraph"), "dev", "--no-browser", "--no-reload",
        "--host", "127.0.0.1", "--port", str(port), "--config", "langgraph.json",
    ]  # fmt: skip
    with log.open("w") as output:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            if process.poll() is not None:
                pytest.fail(f"langgraph dev exited early:\n{log.read_text()[-3000:]}")
            try:
                if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"langgraph dev did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
    assert process.returncode is not None


def test_serves_the_three_graphs_with_the_typed_context(server: str) -> None:
    client = get_sync_client(url=server)
    graphs = {a["graph_id"]: a for a in client.assistants.search()}
    assert set(graphs) >= {"chat", "recall", "ingest"}
    schema = client.assistants.get_schemas(graphs["recall"]["assistant_id"])["context_schema"]
    fields = schema["properties"]
    assert {"namespace", "store_dir", "max_rounds", "semantic_threshold"} <= set(fields)
    assert all(field.get("description") for field in fields.values())


def test_chat_streams_every_recall_step_in_graph_order(server: str) -> None:
    client = get_sync_client(url=server)
    thread = client.threads.create()
    custom: list[dict] = []
    updates: list[str] = []
    replies: list[str] = []
    for part in client.runs.stream(
        thread["thread_id"],
        "chat",
        input={"messages": [{"role": "user", "content": HARBOR}]},
        stream_mode=["updates", "custom"],
        stream_subgraphs=True,
        context={"namespace": DEMO_NAMESPACE, "user_name": "Alex"},
    ):
        in_recall = "|recall:" in part.event
        if part.event.startswith("custom") and in_recall:
            custom.append(part.data)
        elif part.event.startswith("updates") and in_recall:
            updates.extend(part.data.keys())
        elif part.event == "updates" and "respond" in part.data:
            replies += [m["content"] for m in part.data["respond"]["messages"]]
    steps = [event["node"] for event in custom]
    assert steps == updates, "a custom event per node update, as each happens"
    assert steps[0] == "first_hop_recall" and steps[-1] == "assemble_evidence"
    assert "refine_counterfactually" in steps
    edges = {(e.source, e.target) for e in recall_graph.get_graph().edges}
    assert all(pair in edges for pair in itertools.pairwise(steps))
    assert all(event["decision"] and event["reason"] for event in custom)
    assert replies and "allergic to seafood" in replies[-1]
    history = client.threads.get_history(thread["thread_id"])
    assert len(history) >= 5
    assert history[0]["values"]["messages"][-1]["type"] == "ai"
