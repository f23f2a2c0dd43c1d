"""Shared fixtures: no network beyond loopback for the whole session, temp stores, servers."""

from __future__ import annotations

import ipaddress
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ripplegraph.agent.context import (
    DEPLOYMENT_FIELDS,
    BuildSettings,
    Deployed,
    Deployment,
    ModelSettings,
    RecallLimits,
)
from tests import postgres_server

# The product sets the first three itself (tests/unit/test_network_guard.py checks it), so
# the suite starts without them, as a user's shell would; the rest name a developer's own
# model, server or tracing, which tests never use unless they say so.
_UNSET = (
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "ANONYMIZED_TELEMETRY",
    "RIPPLEGRAPH_MODEL",
    "OPENAI_BASE_URL",
    "RIPPLEGRAPH_CHROMA_URL",
    "LANGSMITH_TRACING",
    "LANGCHAIN_TRACING_V2",
)

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


class NetworkAccessError(RuntimeError):
    """A test tried to reach a host other than loopback."""


def _check(address: Any) -> None:
    if isinstance(address, tuple) and address:
        host = str(address[0])
        try:
            if ipaddress.ip_address(host).is_loopback:
                return
        except ValueError:
            if host == "localhost":
                return
        raise NetworkAccessError(f"network access to {address!r} is not allowed in tests")


def guarded_connect(self: socket.socket, address: Any) -> None:
    """``socket.connect`` that refuses any host but loopback."""
    _check(address)
    return _real_connect(self, address)


def guarded_connect_ex(self: socket.socket, address: Any) -> int:
    """``socket.connect_ex`` that refuses any host but loopback."""
    _check(address)
    return _real_connect_ex(self, address)


def pytest_configure(config: pytest.Config) -> None:
    """Guard the network for the whole session, before any fixture of any scope runs.

    Module- and session-scoped fixtures load MiniLM and ingest histories; a function-scoped
    guard would come too late for them.  Unix sockets are fine.
    """
    for variable in _UNSET:
        os.environ.pop(variable, None)
    socket.socket.connect = guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = guarded_connect_ex  # type: ignore[method-assign]


RIPPLEGRAPH = str(Path(sys.executable).parent / "ripplegraph")
"""The command line installed beside the suite's interpreter."""
OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "ANONYMIZED_TELEMETRY": "False",
    "LANGSMITH_TRACING": "false",
}
"""What a process a test starts is given to stay offline (the product sets them itself too)."""


def deployed(**settings: Any) -> Deployed:
    """A deployment from the deployment settings in ``settings``, bound to the other (run) ones.

    The settings of the model call path (``model``, ``base_url``, ``attempts``…) and of
    memory building (``extraction_window``, ``cluster_threshold``…) may be given flat.
    """
    llm = {k: settings.pop(k) for k in list(settings) if k in ModelSettings.model_fields}
    building = {k: settings.pop(k) for k in list(settings) if k in BuildSettings.model_fields}
    infra = {k: v for k, v in settings.items() if k in DEPLOYMENT_FIELDS}
    choices = {k: v for k, v in settings.items() if k not in DEPLOYMENT_FIELDS}
    groups = {"llm": ModelSettings(**llm), "building": BuildSettings(**building)}
    return Deployment(**infra, **groups).bind(**choices)


def adjusted(context: Deployed, **recall: int) -> Deployed:
    """``context`` with some of its recall limits changed (and brought into range)."""
    limits = RecallLimits.model_validate(context.recall.model_dump() | recall)
    return context.model_copy(update={"recall": limits})


@pytest.fixture
def store_dir(tmp_path: Path) -> Iterator[Path]:
    """A fresh store directory."""
    yield tmp_path / "store"


CHROMA_CONFIG = Path(__file__).resolve().parents[1] / "deploy" / "chroma.yaml"
"""The Chroma server config the project ships; the suite's servers run with it."""


def start_chroma(data: Path, port: int, output: Any) -> subprocess.Popen[bytes]:
    """``chroma run deploy/chroma.yaml`` on a loopback port, its files in ``data``."""
    chroma = shutil.which("chroma", path=str(Path(sys.executable).parent)) or "chroma"
    settings = {"CHROMA_PERSIST_PATH": str(data), "CHROMA_PORT": str(port)}
    return subprocess.Popen(
        [chroma, "run", str(CHROMA_CONFIG)],
        stdout=output,
        stderr=subprocess.STDOUT,
        env={
            **os.environ,
            **settings,
            "CHROMA_LISTEN_ADDRESS": "127.0.0.1",
            "ANONYMIZED_TELEMETRY": "False",
        },
    )


def free_port() -> int:
    """A TCP port free on loopback right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_http(url: str, timeout: float, process: subprocess.Popen[bytes] | None = None) -> None:
    """Poll ``url`` until it answers, the process dies, or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode} before answering {url}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"{url} did not answer within {timeout:.0f} s")


@pytest.fixture(scope="session")
def chroma_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Chroma server on loopback.

    CI starts one (``.ci/run``) and names it in ``RIPPLEGRAPH_TEST_CHROMA_URL``; otherwise the
    suite starts ``chroma run`` itself on a free port and stops it at the end.
    """
    given = os.environ.get("RIPPLEGRAPH_TEST_CHROMA_URL")
    if given:
        yield given.rstrip("/")
        return
    port = free_port()
    log = tmp_path_factory.mktemp("chroma-server") / "server.log"
    with log.open("wb") as output:
        process = start_chroma(log.parent / "data", port, output)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_for_http(f"{url}/api/v2/heartbeat", timeout=60, process=process)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """The admin URL of a real PostgreSQL server (tests make a database each on it).

    CI starts one (``.ci/run``) and names it in ``RIPPLEGRAPH_TEST_DATABASE_URL``; otherwise
    the suite starts a throwaway cluster itself when PostgreSQL's server binaries are installed,
    and skips the PostgreSQL backends, saying so, when they are not.
    """
    given = os.environ.get("RIPPLEGRAPH_TEST_DATABASE_URL")
    if given:
        yield given
        return
    if postgres_server.binaries() is None:
        pytest.skip("PostgreSQL backends skipped: no server binaries (apt-get install postgresql)")
    # Not under pytest's base directory: as root the cluster runs as ``postgres``, which must
    # be able to reach it, and that directory is private to root.
    directory = Path(tempfile.mkdtemp(prefix="ripplegraph-postgres-"))
    url = postgres_server.start(directory)
    try:
        yield url
    finally:
        postgres_server.stop(directory)
        shutil.rmtree(directory, ignore_errors=True)
