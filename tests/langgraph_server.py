"""A real ``langgraph dev`` on loopback, started for a test module and stopped after it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def langgraph_dev(
    config: str, env: Mapping[str, str], log: Path, cwd: Path = ROOT
) -> Iterator[str]:
    """``langgraph dev --config CONFIG`` in ``cwd`` with ``env`` added to ours; yields its URL."""
    port = free_port()
    environment = {
        **os.environ,
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "LANGSMITH_TRACING": "false",
        **env,
    }
    command = [
        str(Path(sys.executable).parent / "langgraph"), "dev", "--no-browser", "--no-reload",
        "--host", "127.0.0.1", "--port", str(port), "--config", config,
    ]  # fmt: skip
    with log.open("w") as output:
        process = subprocess.Popen(
            command, cwd=cwd, env=environment, stdout=output, stderr=subprocess.STDOUT,
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
