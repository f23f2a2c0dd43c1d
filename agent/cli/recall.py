"""Verbs that recall: ask a question, replay a stored recall, run the demo, draw the machine."""

from __future__ import annotations

import itertools
import json
import shlex
import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from ripplegraph.agent.cli.app import (
    RECALL,
    BaseUrlOption,
    ChromaOption,
    DatabaseOption,
    ModelOption,
    NamespaceOption,
    StoreOption,
    app,
    console,
    context_of,
    errors,
    fail,
    named,
    note,
    store_of,
)
from ripplegraph.agent.cli.memory import ingest_sessions, summary_table
from ripplegraph.agent.recall_config import RECIPES

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from ripplegraph.agent.state import RecallOutput, TraceEvent

HtmlOption = Annotated[
    Path | None,
    typer.Option(
        "--html",
        help="Also write a self-contained trace page (HTML, no requests) for this recall here.",
    ),
]


LEGEND = (
    "How to read it: ρ is the evidence score (alignment with the question plus how the memory "
    "was reached). 'reached by' lists channel#rank: semantic (embedding similarity), lexical "
    "(BM25 words), cue (people, places, times), exact (an identifier only it holds), expansion "
    "(a walk over the memory graph, with its hops), root, counterfactual; ⚓ marks an anchor "
    "the walk started from. 'budget after' is rN hN cfN: recollection rounds, hops walked and "
    "counterfactual refinements spent so far."
)
"""Printed with the trace and evidence tables (``demo``, ``ask --trace``)."""


def _spent(event: TraceEvent) -> str:
    spent = event.budget or {}
    return f"r{spent.get('rounds', 0)} h{spent.get('hops', 0)} cf{spent.get('refinements', 0)}"


def _trace_table(result: RecallOutput) -> Table:
    table = Table(title="recall trace", show_lines=True)
    for column in ("#", "node", "decision", "reason", "budget after"):
        table.add_column(column, no_wrap=column == "node")
    for step, event in enumerate(result.trace, start=1):
        table.add_row(str(step), event.node, event.decision, event.reason, _spent(event))
    return table


def _evidence_table(result: RecallOutput, limit: int) -> Table:
    table = Table(title=f"evidence (top {limit} of {len(result.evidence)})")
    for column in ("ρ", "memory", "reached by"):
        table.add_column(column)
    for item in result.evidence[:limit]:
        via = ", ".join(
            f"{s.channel}#{s.rank}" + (f" via {len(s.path) - 1} hop(s)" if len(s.path) > 1 else "")
            for s in item.sources
        )
        table.add_row(f"{item.score:.2f}", item.memory.text, via + (" ⚓" if item.anchor else ""))
    return table


def _write_page(path: Path, values: dict[str, Any], thread_id: str) -> None:
    """The trace page of a finished recall, from its checkpointed state."""
    from ripplegraph.agent.graph import recall_graph
    from ripplegraph.agent.paths import private
    from ripplegraph.agent.surfaces.trace_page import render_page, state_from

    page = render_page(state_from(values), recall_graph.get_graph(), thread_id=thread_id)
    try:
        with open(path, "w", encoding="utf-8", opener=private) as out:  # it quotes memories
            out.write(page)
    except OSError as error:
        raise fail(f"cannot write the trace page: {error.strerror or error}: {path}") from error
    errors.print(f"trace page: {path} ({len(page.encode('utf-8')) // 1024} KiB)")


def _budget_line(result: RecallOutput) -> str:
    used = result.budget
    limits = used.limits
    return (
        f"stop reason: {result.stop_reason} · budget: rounds {used.rounds}/{limits.get('rounds')}, "
        f"hops {used.hops}, refinements {used.refinements}/{limits.get('refinements')}, "
        f"LLM calls {used.llm_calls}/{limits.get('llm_calls')}, tokens {used.tokens}"
    )


def _as_json(
    thread_id: str, question: str, namespace: str, reply: str, result: RecallOutput
) -> str:
    return json.dumps(
        {
            "thread_id": thread_id,
            "query": question,
            "namespace": namespace,
            "answer": reply,
            "context": result.context,
            "stop_reason": result.stop_reason,
            "budget": result.budget.model_dump(),
            "evidence": [
                {
                    "id": e.memory.id,
                    "text": e.memory.text,
                    "score": e.score,
                    "anchor": e.anchor,
                    "standing": e.standing,
                    "session": e.memory.provenance.session_id,
                    "turn_ids": e.memory.provenance.turn_ids,
                    "sources": [s.model_dump() for s in e.sources],
                }
                for e in result.evidence
            ],
            "roots": [r.model_dump() for r in result.roots],
            "trace": [t.model_dump(mode="json") for t in result.trace],
        }
    )


@app.command(rich_help_panel=RECALL)
def ask(
    question: Annotated[str, typer.Argument(help="The question to recall evidence for.")],
    namespace: NamespaceOption,
    store: StoreOption = None,
    chroma_url: ChromaOption = None,
    database_url: DatabaseOption = None,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    recipe: Annotated[
        str, typer.Option("--recipe", help="Retrieval recipe: " + ", ".join(RECIPES))
    ] = "full",
    trace: Annotated[bool, typer.Option("--trace", help="Show the step-by-step trace.")] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the whole output as JSON.")
    ] = False,
    thread: Annotated[
        str | None,
        typer.Option("--thread", help="Thread id to store the run under [default: a new one]."),
    ] = None,
    html: HtmlOption = None,
) -> None:
    """Recall the evidence a question needs and print it as context for a prompt.

    The evidence is what memory holds, not an answer; --json adds the reply drafted from it
    (the offline extractive one without --model).

    Every run is checkpointed in the store's checkpoints.sqlite under a thread id, so
    'ripplegraph trace THREAD_ID' can replay its steps later.
    """
    from ripplegraph.agent.memory.items import checked_query
    from ripplegraph.agent.services import Services
    from ripplegraph.agent.surfaces.api import answer, checkpointed_recall, recall

    if recipe not in RECIPES:
        raise fail(f"unknown recipe {recipe!r} (one of {', '.join(RECIPES)})")
    question = checked_query(question)  # refused in the API's words
    context = context_of(
        store, chroma_url, database_url, model, base_url, recall_recipe=recipe, reading=True
    )
    thread_id = thread or uuid.uuid4().hex
    Services(context.deployment).caller()
    stored = named(context, namespace)
    if store_of(context).count_units(stored) == 0:
        note(f"namespace {namespace!r} holds no memories")
    with checkpointed_recall(Path(context.deployment.store_dir)) as graph:
        config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
        if graph.get_state(config).values:
            raise fail(f"thread {thread_id!r} already holds a recall")
        result = recall(question, stored, context, graph, thread_id)
        if html is not None:
            _write_page(html, graph.get_state(config).values, thread_id)
    if as_json:
        reply, fell_back = answer(question, result, context)
        if fell_back:
            note(f"answer role fell back: {fell_back}")
        typer.echo(_as_json(thread_id, question, namespace, reply, result))
        return
    console.print(result.context)
    if trace:
        console.print(_trace_table(result))
        console.print(LEGEND)
    console.print(_budget_line(result))
    where = f" --store {shlex.quote(str(store))}" if store is not None else ""
    console.print(f"thread: {thread_id}  (ripplegraph trace {thread_id}{where})")


@app.command("trace", rich_help_panel=RECALL)
def show_trace(
    thread_id: Annotated[str, typer.Argument(help="Thread id printed by 'ripplegraph ask'.")],
    store: StoreOption = None,
    html: HtmlOption = None,
) -> None:
    """Render a stored recall thread step by step, with the checkpoint before each step."""
    from ripplegraph.agent.state import TraceEvent
    from ripplegraph.agent.surfaces.api import checkpointed_recall

    store_dir = Path(context_of(store, None, None, reading=True).deployment.store_dir)
    with checkpointed_recall(store_dir) as graph:
        config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
        history = list(graph.get_state_history(config))[::-1]
    if not history:
        raise fail(f"no stored thread {thread_id!r} in {store_dir}")
    if html is not None:
        _write_page(html, history[-1].values, thread_id)
    table = Table(title=f"thread {thread_id}: {history[-1].values.get('query', '')}")
    for column in ("step", "checkpoint", "node", "decision", "reason", "budget after"):
        table.add_column(column, no_wrap=column == "node")
    seen = 0
    for before, after in itertools.pairwise(history):
        events = [TraceEvent.model_validate(e) for e in after.values.get("trace", [])[seen:]]
        seen += len(events)
        checkpoint = str(before.config["configurable"].get("checkpoint_id", ""))
        for event in events:
            step = str((after.metadata or {}).get("step", ""))
            table.add_row(
                step, checkpoint[-12:], event.node, event.decision, event.reason, _spent(event)
            )
    console.print(table)
    console.print(f"stop reason: {history[-1].values.get('stop_reason', '')}")


@app.command(rich_help_panel=RECALL)
def demo(
    store: StoreOption = None,
) -> None:
    """Ingest the built-in demo history offline, then answer the demo questions with traces."""
    from ripplegraph.agent.context import Deployment
    from ripplegraph.agent.surfaces.api import answer, recall
    from ripplegraph.studio import DEMO_NAMESPACE, demo_questions, demo_sessions

    with tempfile.TemporaryDirectory(prefix="ripplegraph-demo-") as scratch:
        context = Deployment(store_dir=str(store or Path(scratch) / "store")).bind()
        summary = ingest_sessions(demo_sessions(), DEMO_NAMESPACE, context, show_progress=True)
        console.print(summary_table(summary))
        console.print(LEGEND)
        for question in demo_questions():
            console.print(Text(f"── {question}", style="bold"))
            result = recall(question, DEMO_NAMESPACE, context)
            console.print(_trace_table(result))
            console.print(_evidence_table(result, limit=8))
            console.print(_budget_line(result))
            console.print(answer(question, result, context)[0])


@app.command(rich_help_panel=RECALL)
def diagram() -> None:
    """Print the recall state machine as Mermaid (drawn offline from the compiled graph)."""
    from ripplegraph.agent.graph import recall_graph

    typer.echo(recall_graph.get_graph().draw_mermaid())
