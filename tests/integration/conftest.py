from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ripplegraph.agent.cli import app
from ripplegraph.agent.context import Context, Deployed
from ripplegraph.agent.graph import ingest_graph
from ripplegraph.agent.services import Services
from ripplegraph.agent.state import IngestInput, IngestOutput
from ripplegraph.agent.store import MemoryStore
from ripplegraph.studio import DEMO_NAMESPACE, demo_sessions
from tests.conftest import deployed
from tests.openai_server import Reply, Request, ScriptedOpenAI
from tests.postgres_server import new_database


def ingest(context: Context | Deployed, namespace: str, sessions: list) -> IngestOutput:
    raw = ingest_graph.invoke(IngestInput(namespace=namespace, sessions=sessions), context=context)
    return IngestOutput.model_validate(raw)


BACKENDS = ["embedded", "chroma-server", "postgres", "postgres+chroma-server"]
"""Where the vectors and the relational side live: embedded Chroma and SQLite, a Chroma
server, PostgreSQL with embedded Chroma, PostgreSQL with a Chroma server.

Both vector layouts are covered: on ``embedded`` and ``postgres+chroma-server`` a namespace
keeps its vectors in rows (the default for every namespace the tests make, all small), on
``chroma-server`` and ``postgres`` every namespace has a collection of its own."""
IN_COLLECTIONS = {"chroma-server", "postgres"}
"""The backends whose stores give every namespace a collection (``collection_threshold=0``)."""


def backend_context(
    request: pytest.FixtureRequest, store_dir: Path, **settings: object
) -> Deployed:
    """A deployment on the backend the test is parametrised with, bound to run choices.

    ``settings`` may name deployment fields (model, base_url…) and run choices alike.  Each
    PostgreSQL deployment gets a database of its own.
    """
    param = str(request.param)
    url = request.getfixturevalue("chroma_url") if param.endswith("chroma-server") else None
    database = (
        new_database(request.getfixturevalue("postgres")) if param.startswith("postgres") else None
    )
    if param in IN_COLLECTIONS:
        settings.setdefault("collection_threshold", 0)
    return deployed(store_dir=str(store_dir), chroma_url=url, database_url=database, **settings)


def store_args(context: Deployed) -> list[str]:
    """The CLI options that open the context's store: directory, Chroma server, database."""
    deployment = context.deployment
    args = ["--store", deployment.store_dir]
    if deployment.chroma_url:
        args += ["--chroma-url", deployment.chroma_url]
    if deployment.database_url:
        args += ["--database-url", deployment.database_url]
    return args


@pytest.fixture(scope="module", params=BACKENDS)
def demo_context(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Deployed:
    """The demo history ingested once per module, on embedded Chroma and on a Chroma server."""
    context = backend_context(request, tmp_path_factory.mktemp("demo") / "store")
    ingest(context, DEMO_NAMESPACE, demo_sessions())
    return context


@pytest.fixture(params=BACKENDS)
def fresh_context(request: pytest.FixtureRequest, tmp_path: Path) -> Deployed:
    """An empty store, on each backend."""
    return backend_context(request, tmp_path / "store")


@pytest.fixture(scope="module")
def demo_store(demo_context: Deployed) -> MemoryStore:
    return Services(demo_context.deployment).store()


@pytest.fixture
def serve() -> Iterator[Callable[[Callable[[Request], Reply]], ScriptedOpenAI]]:
    """Start scripted OpenAI-compatible servers on loopback; all stop after the test."""
    servers: list[ScriptedOpenAI] = []

    def start(script: Callable[[Request], Reply]) -> ScriptedOpenAI:
        servers.append(ScriptedOpenAI(script))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def check_report(context: Deployed, *options: str, exit_code: int = 0) -> dict[str, Any]:
    """``ripplegraph check --json`` on the context's store; its exit status must be as given."""
    result = CliRunner().invoke(app, ["check", "--json", *options, *store_args(context)])
    assert result.exit_code == exit_code, result.output
    report: dict[str, Any] = json.loads(result.stdout)
    return report
