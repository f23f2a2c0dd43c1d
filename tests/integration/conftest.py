from __future__ import annotations

from pathlib import Path

import pytest

from agent.context import Context
from agent.graph import ingest_graph
from agent.state import IngestInput, IngestOutput
from agent.store import MemoryStore
from studio import DEMO_NAMESPACE, demo_sessions


def ingest(context: Context, namespace: str, sessions: list) -> IngestOutput:
    raw = ingest_graph.invoke(IngestInput(namespace=namespace, sessions=sessions), context=context)
    return IngestOutput.model_validate(raw)


@pytest.fixture(scope="module")
def demo_context(tmp_path_factory: pytest.TempPathFactory) -> Context:
    context = Context(store_dir=str(tmp_path_factory.mktemp("demo") / "store"))
    ingest(context, DEMO_NAMESPACE, demo_sessions())
    return context


@pytest.fixture(scope="module")
def demo_store(demo_context: Context) -> MemoryStore:
    return demo_context.store()


@pytest.fixture
def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]
