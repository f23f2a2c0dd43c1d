"""Step-by-step inspection: custom stream events, state history, time travel, `trace`."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ripplegraph.agent.cli import app
from ripplegraph.agent.context import Deployed
from ripplegraph.agent.graph import build_recall_graph, recall_graph
from ripplegraph.agent.state import RecallInput, RecallOutput
from ripplegraph.agent.surfaces.checkpointing import memory_saver
from ripplegraph.agent.tracing import STREAM_EVENT_TYPE
from ripplegraph.studio import DEMO_NAMESPACE
from tests.conftest import adjusted
from tests.integration.conftest import store_args

pytestmark = pytest.mark.integration
MUGS = "How much did each mug I gave my team cost?"


def test_nodes_stream_their_decisions_as_they_happen(demo_context: Deployed) -> None:
    events = []
    final = None
    for mode, chunk in recall_graph.stream(
        RecallInput(query=MUGS, namespace=DEMO_NAMESPACE),
        context=demo_context,
        stream_mode=["custom", "values"],
    ):
        if mode == "custom":
            events.append(chunk)
        else:
            final = chunk
    assert final is not None
    trace = RecallOutput.model_validate(final).trace
    assert all(e["type"] == STREAM_EVENT_TYPE for e in events)
    assert [e["node"] for e in events] == [t.node for t in trace]
    assert [e["decision"] for e in events] == [t.decision for t in trace]


def test_time_travel_before_expansion_with_a_smaller_budget(demo_context: Deployed) -> None:
    graph = build_recall_graph().compile(checkpointer=memory_saver())
    config = {"configurable": {"thread_id": "mugs"}}
    graph.invoke(RecallInput(query=MUGS, namespace=DEMO_NAMESPACE), config, context=demo_context)
    history = list(graph.get_state_history(config))
    assert len(history) >= 7
    before_expand = [s for s in history if s.next == ("expand_locally",)][-1]  # round 1's
    first = RecallOutput.model_validate(history[0].values)
    replayed = RecallOutput.model_validate(
        graph.invoke(None, before_expand.config, context=adjusted(demo_context, hops=1))
    )
    first_expand = next(e for e in first.trace if e.node == "expand_locally")
    new_expand = next(e for e in replayed.trace if e.node == "expand_locally")
    assert first_expand.budget and first_expand.budget["hops"] == 2
    assert new_expand.budget and new_expand.budget["hops"] == 1
    assert "1-hop neighbourhood" in new_expand.reason
    assert set(new_expand.added) != set(first_expand.added)


def test_trace_command_renders_a_stored_thread(demo_context: Deployed) -> None:
    runner = CliRunner()
    store = demo_context.deployment.store_dir
    opened = store_args(demo_context)
    asked = runner.invoke(
        app, ["ask", MUGS, "-n", DEMO_NAMESPACE, "--thread", "t1", "--json", *opened]
    )
    assert asked.exit_code == 0, asked.output
    shown = runner.invoke(app, ["trace", "t1", "--store", store])
    assert shown.exit_code == 0, shown.output
    for node in ("first_hop_recall", "plan_recollection", "expand_locally", "assemble_evid"):
        assert node in shown.output
    again = runner.invoke(app, ["ask", MUGS, "-n", DEMO_NAMESPACE, "--thread", "t1", *opened])
    assert again.exit_code == 2 and "already holds a recall" in again.output
    missing = runner.invoke(app, ["trace", "nope", "--store", store])
    assert missing.exit_code == 2


def test_the_documented_diagram_is_the_compiled_graph() -> None:
    page = Path(__file__).resolve().parents[2] / "docs" / "concepts" / "recall-machine.md"
    drawn = recall_graph.get_graph().draw_mermaid().strip()
    assert f"```text\n{drawn}\n```" in page.read_text(), "run `ripplegraph diagram`, paste it"
