"""``ripplegraph``: ingest dialogue, recall evidence for questions, and run the offline demo."""

from __future__ import annotations

import itertools
import json
import sys
import tempfile
import uuid
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from langchain_core.runnables import RunnableConfig
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Column, Table
from typer.core import TyperGroup

import ripplegraph
from ripplegraph.agent import auth
from ripplegraph.agent.api import (
    Remembered,
    answer,
    checkpointed_recall,
    forget_now,
    recall,
    remember,
)
from ripplegraph.agent.context import Deployed, Deployment, ModelSettings, default_store_dir
from ripplegraph.agent.errors import RippleGraphError
from ripplegraph.agent.eval.commands import bench
from ripplegraph.agent.graph import recall_graph
from ripplegraph.agent.ingest_files import load_sessions
from ripplegraph.agent.items import tuple_of, value_text
from ripplegraph.agent.langgraph_store import RippleGraphStore, add_said
from ripplegraph.agent.memory import Session
from ripplegraph.agent.recall_config import RECIPES
from ripplegraph.agent.services import Services
from ripplegraph.agent.state import (
    MAX_QUERY_CHARS,
    RecallOutput,
    TraceEvent,
)
from ripplegraph.agent.store import LINK_TYPES
from ripplegraph.agent.store.transfer import Transferred, export_namespace, import_namespace
from ripplegraph.agent.trace_page import render_page, state_from

console = Console()
errors = Console(stderr=True)


class _Reporting(TyperGroup):
    """Every command reports a refusal alike: the message, exit status 2, no traceback.

    ``RippleGraphError`` is what RippleGraph refuses on purpose; ``ValueError`` is bad input
    caught by validation (pydantic's errors among them).
    """

    def invoke(self, ctx: Any) -> Any:
        """Run the command, turning a refusal into its message and exit status 2."""
        try:
            return super().invoke(ctx)
        except (RippleGraphError, ValueError) as error:
            raise _fail(str(error)) from error


app = typer.Typer(
    cls=_Reporting,
    help="RippleGraph: long-term memory for LLM agents.",
    no_args_is_help=True,
    add_completion=False,
)
app.add_typer(bench, name="bench")


def _version(show: bool) -> None:
    if show:
        typer.echo(f"ripplegraph {ripplegraph.__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """RippleGraph: long-term memory for LLM agents."""


users = typer.Typer(
    help="Users of a deployment served with authentication (langgraph.served.json).",
    no_args_is_help=True,
)
app.add_typer(users, name="users")

StoreOption = Annotated[
    Path | None,
    typer.Option(
        "--store",
        help="Store directory \\[default: $RIPPLEGRAPH_STORE or a per-user data directory].",
    ),
]
ChromaOption = Annotated[
    str | None,
    typer.Option(
        "--chroma-url",
        envvar="RIPPLEGRAPH_CHROMA_URL",
        help="Chroma server (http://host:port) for vectors instead of the embedded store.",
    ),
]
DatabaseOption = Annotated[
    str | None,
    typer.Option(
        "--database-url",
        envvar="RIPPLEGRAPH_DATABASE_URL",
        help="PostgreSQL URL (postgresql://…) for the relational side; default: graph.sqlite "
        "in the store.",
    ),
]
ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        envvar="RIPPLEGRAPH_MODEL",
        help="Chat model for the LLM roles ('openai:gpt-4.1-mini', or the model name served at "
        "--base-url); none = the offline policies.",
    ),
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        envvar="OPENAI_BASE_URL",
        help="OpenAI-compatible endpoint for --model (vLLM, Ollama, llama.cpp server).",
    ),
]
NamespaceOption = Annotated[str, typer.Option("--namespace", "-n", help="Namespace to use.")]
UsersFileOption = Annotated[
    Path | None,
    typer.Option(
        "--users-file",
        help="Users file \\[default: $RIPPLEGRAPH_USERS, else users.json in the store].",
    ),
]
HtmlOption = Annotated[
    Path | None,
    typer.Option(
        "--html",
        help="Also write a self-contained trace page (HTML, no requests) for this recall here.",
    ),
]
_SESSIONS_PER_BATCH = 8


def _context(
    store: Path | None,
    chroma_url: str | None,
    database_url: str | None,
    model: str | None = None,
    base_url: str | None = None,
    **settings: Any,
) -> Deployed:
    """The deployment the common options name, bound to the run's choices."""
    deployment = Deployment(
        store_dir=str(store or default_store_dir()),
        chroma_url=chroma_url or None,
        database_url=database_url or None,
        llm=ModelSettings(model=model or None, base_url=base_url or None),
    )
    return deployment.bind(**settings)


def _fail(message: str) -> typer.Exit:
    errors.print(f"[red]error:[/red] {escape(message)}", soft_wrap=True)
    return typer.Exit(code=2)


def _known_namespace(context: Deployed, namespace: str) -> None:
    """Refuse a namespace the store never held: a typo must not read as "no memories"."""
    memory = context.store()
    if not memory.known(namespace):
        listed = ", ".join(memory.holding_namespaces(limit=20)) or "none yet"
        raise _fail(
            f"unknown namespace {namespace!r} in {context.deployment.store_dir} (known: {listed})"
        )


def ingest_sessions(
    sessions: Sequence[Session], namespace: str, context: Deployed, *, show_progress: bool
) -> Remembered:
    """``remember`` with a progress bar on stderr."""
    with Progress(
        TextColumn("[bold]ingest[/bold] {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("turns"),
        TimeElapsedColumn(),
        console=errors,
        disable=not show_progress,
        transient=True,
    ) as progress:
        task = progress.add_task(namespace, total=sum(len(s.turns) for s in sessions))
        return remember(sessions, namespace, context, lambda turns: progress.advance(task, turns))


def _summary_table(summary: Remembered) -> Table:
    table = Table(title=f"namespace {summary.namespace}", show_header=False)
    table.add_row("memory units", str(summary.units))
    table.add_row("new units", str(summary.new_units))
    for edge_type in LINK_TYPES:
        table.add_row(f"{edge_type} edges", str(summary.edges.get(edge_type, 0)))
    table.add_row("seconds", f"{summary.seconds:.1f}")
    return table


@app.command()
def ingest(
    file: Annotated[Path, typer.Argument(help="Sessions JSON (documented format) or LoCoMo.")],
    namespace: NamespaceOption,
    store: StoreOption = None,
    chroma_url: ChromaOption = None,
    database_url: DatabaseOption = None,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON summary last.")] = False,
) -> None:
    """Remember a dialogue file: extract memory units, store them, link them."""
    sessions = load_sessions(file)
    context = _context(store, chroma_url, database_url, model, base_url)
    Services(context.deployment).caller()  # a model that cannot be made fails before any write
    summary = ingest_sessions(sessions, namespace, context, show_progress=not as_json)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "units": summary.units,
                    "new_units": summary.new_units,
                    "edges": {t: summary.edges.get(t, 0) for t in LINK_TYPES},
                    "seconds": summary.seconds,
                }
            )
        )
    else:
        console.print(_summary_table(summary))


def _trace_table(result: RecallOutput) -> Table:
    table = Table(title="recall trace", show_lines=True)
    for column in ("#", "node", "decision", "reason", "budget after"):
        table.add_column(column, overflow="fold", no_wrap=column == "node")
    for step, event in enumerate(result.trace, start=1):
        spent = event.budget or {}
        after = f"r{spent.get('rounds', 0)} h{spent.get('hops', 0)} cf{spent.get('refinements', 0)}"
        table.add_row(str(step), event.node, event.decision, event.reason, after)
    return table


def _evidence_table(result: RecallOutput, limit: int) -> Table:
    table = Table(title=f"evidence (top {limit} of {len(result.evidence)})")
    for column in ("ρ", "memory", "reached by"):
        table.add_column(column, overflow="fold")
    for item in result.evidence[:limit]:
        via = ", ".join(
            f"{s.channel}#{s.rank}" + (f" via {len(s.path) - 1} hop(s)" if len(s.path) > 1 else "")
            for s in item.sources
        )
        table.add_row(f"{item.score:.2f}", item.memory.text, via + (" ⚓" if item.anchor else ""))
    return table


def _write_page(path: Path, values: dict[str, Any], thread_id: str) -> None:
    """The trace page of a finished recall, from its checkpointed state."""
    page = render_page(state_from(values), recall_graph.get_graph(), thread_id=thread_id)
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as error:
        raise _fail(f"cannot write the trace page: {error}") from error
    errors.print(f"trace page: {path} ({len(page.encode('utf-8')) // 1024} KiB)")


def _budget_line(result: RecallOutput) -> str:
    used = result.budget
    limits = used.limits
    return (
        f"stop reason: {result.stop_reason} · budget: rounds {used.rounds}/{limits.get('rounds')}, "
        f"hops {used.hops}, refinements {used.refinements}/{limits.get('refinements')}, "
        f"LLM calls {used.llm_calls}/{limits.get('llm_calls')}, tokens {used.tokens}"
    )


@app.command()
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
        typer.Option("--thread", help="Thread id to store the run under \\[default: a new one]."),
    ] = None,
    html: HtmlOption = None,
) -> None:
    """Recall the evidence a question needs and print the answer context.

    Every run is checkpointed in the store's ``checkpoints.sqlite`` under a thread id, so
    ``ripplegraph trace THREAD_ID`` can replay its steps later.
    """
    if recipe not in RECIPES:
        raise _fail(f"unknown recipe {recipe!r} (one of {', '.join(RECIPES)})")
    if not question.strip():
        raise _fail("the question is empty")
    if len(question) > MAX_QUERY_CHARS:
        raise _fail(
            f"the question has {len(question):,} characters; the limit is {MAX_QUERY_CHARS:,}"
        )
    context = _context(store, chroma_url, database_url, model, base_url, recall_recipe=recipe)
    thread_id = thread or uuid.uuid4().hex
    Services(context.deployment).caller()
    _known_namespace(context, namespace)
    if context.store().count_units(namespace) == 0:
        errors.print(f"[yellow]note:[/yellow] namespace {namespace!r} holds no memories")
    with checkpointed_recall(Path(context.deployment.store_dir)) as graph:
        config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
        if graph.get_state(config).values:
            raise _fail(f"thread {thread_id!r} already holds a recall")
        result = recall(question, namespace, context, graph, thread_id)
        if html is not None:
            _write_page(html, graph.get_state(config).values, thread_id)
    reply, fell_back = answer(question, result, context)
    if fell_back:
        errors.print(f"[yellow]note:[/yellow] answer role fell back: {escape(fell_back)}")
    if as_json:
        payload = {
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
        typer.echo(json.dumps(payload))
        return
    console.print(result.context)
    if trace:
        console.print(_trace_table(result))
    console.print(_budget_line(result))
    console.print(f"thread: {thread_id}  (ripplegraph trace {thread_id})")


@app.command("trace")
def show_trace(
    thread_id: Annotated[str, typer.Argument(help="Thread id printed by `ripplegraph ask`.")],
    store: StoreOption = None,
    html: HtmlOption = None,
) -> None:
    """Render a stored recall thread step by step, with the checkpoint before each step."""
    store_dir = Path(store or default_store_dir())
    with checkpointed_recall(store_dir) as graph:
        config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
        history = list(graph.get_state_history(config))[::-1]
    if not history:
        raise _fail(f"no stored thread {thread_id!r} in {store_dir}")
    if html is not None:
        _write_page(html, history[-1].values, thread_id)
    table = Table(title=f"thread {thread_id}: {history[-1].values.get('query', '')}")
    for column in ("step", "checkpoint", "node", "decision", "reason", "budget after"):
        table.add_column(column, overflow="fold", no_wrap=column == "node")
    seen = 0
    for before, after in itertools.pairwise(history):
        events = [TraceEvent.model_validate(e) for e in after.values.get("trace", [])[seen:]]
        seen += len(events)
        checkpoint = str(before.config["configurable"].get("checkpoint_id", ""))
        for event in events:
            spent = event.budget or {}
            table.add_row(
                str((after.metadata or {}).get("step", "")),
                checkpoint[-12:],
                event.node,
                event.decision,
                event.reason,
                f"r{spent.get('rounds', 0)} h{spent.get('hops', 0)} "
                f"cf{spent.get('refinements', 0)}",
            )
    console.print(table)
    console.print(f"stop reason: {history[-1].values.get('stop_reason', '')}")


@app.command("seed-demo")
def seed_demo(
    store: StoreOption = None,
    chroma_url: ChromaOption = None,
    database_url: DatabaseOption = None,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
) -> None:
    """Ingest the demo history into namespace 'demo' of the store Studio's graphs read."""
    from ripplegraph.studio import DEMO_NAMESPACE, demo_sessions

    context = _context(store, chroma_url, database_url, model, base_url)
    summary = ingest_sessions(demo_sessions(), DEMO_NAMESPACE, context, show_progress=True)
    console.print(_summary_table(summary))
    console.print(
        f"store: {context.deployment.store_dir} — set namespace = {DEMO_NAMESPACE} in Studio"
    )


@app.command()
def diagram() -> None:
    """Print the recall state machine as Mermaid (drawn offline from the compiled graph)."""
    typer.echo(recall_graph.get_graph().draw_mermaid())


@app.command()
def demo(
    store: StoreOption = None,
) -> None:
    """Ingest the built-in demo history offline, then answer the demo questions with traces."""
    from ripplegraph.studio import DEMO_NAMESPACE, demo_questions, demo_sessions

    with tempfile.TemporaryDirectory(prefix="ripplegraph-demo-") as scratch:
        context = Deployment(store_dir=str(store or Path(scratch) / "store")).bind()
        summary = ingest_sessions(demo_sessions(), DEMO_NAMESPACE, context, show_progress=True)
        console.print(_summary_table(summary))
        for question in demo_questions():
            console.rule(f"[bold]{question}")
            result = recall(question, DEMO_NAMESPACE, context)
            console.print(_trace_table(result))
            console.print(_evidence_table(result, limit=8))
            console.print(_budget_line(result))
            console.print(answer(question, result, context)[0])


@app.command()
def calibrate(
    namespace: NamespaceOption,
    store: StoreOption = None,
    chroma_url: ChromaOption = None,
    database_url: DatabaseOption = None,
) -> None:
    """Print the cosine distribution that the semantic-edge threshold is calibrated from."""
    from ripplegraph.agent.linking import similarity_profile

    context = _context(store, chroma_url, database_url)
    memory = context.store()
    if memory.count_units(namespace) < 2:
        raise _fail(f"namespace {namespace!r} has fewer than two memories")
    profile = similarity_profile(memory, namespace)
    table = Table(title=f"cosine similarity in {namespace} ({context.deployment.embedding_model})")
    table.add_column("distribution")
    table.add_column("quantile")
    table.add_column("cosine", justify="right")
    for name, quantiles in profile.items():
        for quantile, value in quantiles.items():
            table.add_row(name, quantile, f"{value:.3f}")
    console.print(table)
    threshold = context.deployment.building.linking.semantic_threshold
    console.print(f"current semantic threshold: {threshold}")


@app.command()
def forget(
    namespace: NamespaceOption,
    memory_id: Annotated[
        list[str] | None, typer.Option("--memory-id", help="A memory id (repeatable).")
    ] = None,
    session: Annotated[
        str | None, typer.Option("--session", help="Every memory of a session.")
    ] = None,
    person: Annotated[
        str | None, typer.Option("--person", help="Every memory naming or said by a person.")
    ] = None,
    everything: Annotated[bool, typer.Option("--all", help="The whole namespace.")] = False,
    store: StoreOption = None,
    chroma_url: ChromaOption = None,
    database_url: DatabaseOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Forget memories everywhere, down to the bytes under the store, before it returns.

    Vectors, texts, BM25, cue index, edges and root evidence go, and so does every stored
    recall thread that quoted them (purged whole); SQLite's deleted rows are zeroed and its
    write-ahead log truncated.  What a forget leaves in Chroma's index files and catalog or in
    PostgreSQL's table files is compacted before the command ends (a long-running process
    does that within its erasure window; see compact).
    """
    context = _context(store, chroma_url, database_url)
    _known_namespace(context, namespace)
    forgotten = forget_now(
        context,
        namespace,
        memory_ids=memory_id or (),
        session=session,
        person=person,
        everything=everything,
    )
    remaining = context.store().count_units(namespace)
    if as_json:
        typer.echo(json.dumps({"forgotten": forgotten, "remaining": remaining}))
        return
    console.print(f"forgot {len(forgotten)} memories in {namespace!r}; {remaining} remain")


def _items(context: Deployed) -> RippleGraphStore:
    return RippleGraphStore(deployment=context.deployment, context=context)


@app.command()
def add(
    namespace: NamespaceOption,
    text: Annotated[str, typer.Argument(help="What was said; '-' reads it from stdin.")] = "-",
    speaker: Annotated[str, typer.Option("--speaker", help="Who said it.")] = "User",
    session: Annotated[
        str | None, typer.Option("--session", help="The session it belongs to.")
    ] = None,
    date: Annotated[
        str | None, typer.Option("--date", help="When it was said (ISO 8601) \\[default: now].")
    ] = None,
    store: StoreOption = None,
    chroma_url: ChromaOption = None,
    database_url: DatabaseOption = None,
) -> None:
    """Remember one thing said, as ``Memory.add`` does; prints the id to forget it by."""
    words = (sys.stdin.read() if text == "-" else text).strip()
    if not words:
        raise _fail("nothing to add: give the text, or pipe it in with '-'")
    context = _context(store, chroma_url, database_url)
    key = add_said(_items(context), namespace, words, speaker=speaker, session=session, date=date)
    typer.echo(key)


@app.command("list")
def list_memories(
    namespace: NamespaceOption,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Memories to show.")] = 50,
    offset: Annotated[int, typer.Option("--offset", min=0, help="Memories to skip.")] = 0,
    store: StoreOption = None,
    chroma_url: ChromaOption = None,
    database_url: DatabaseOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the items as JSON.")] = False,
) -> None:
    """What a namespace holds, oldest first: added items, and memories ingested otherwise."""
    context = _context(store, chroma_url, database_url)
    _known_namespace(context, namespace)
    items = _items(context).search(tuple_of(namespace), limit=limit, offset=offset)
    if as_json:
        typer.echo(json.dumps([item.dict() for item in items], ensure_ascii=False))
        return
    table = Table(Column("id", no_wrap=True, min_width=32), "updated", "memory")
    for item in items:
        table.add_row(item.key, f"{item.updated_at:%Y-%m-%d %H:%M}", escape(value_text(item.value)))
    console.print(table)


@app.command("namespaces")
def list_namespaces(
    prefix: Annotated[
        str | None, typer.Option("--prefix", help="Only this namespace and those below it.")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Namespaces per page.")] = 100,
    offset: Annotated[int, typer.Option("--offset", min=0, help="Namespaces to skip.")] = 0,
    store: StoreOption = None,
    chroma_url: ChromaOption = None,
    database_url: DatabaseOption = None,
) -> None:
    """The namespaces holding memories, by name, one page at a time, with what each holds."""
    memory = _context(store, chroma_url, database_url).store()
    table = Table("namespace", "memories", "added items")
    for namespace in memory.holding_namespaces(prefix, limit, offset):
        table.add_row(
            namespace, str(memory.count_units(namespace)), str(len(memory.items(namespace)))
        )
    console.print(table)


@app.command("export")
def export_memories(
    namespace: NamespaceOption,
    out: Annotated[Path, typer.Option("--out", help="The JSON Lines file to write.")],
    store: StoreOption = None,
    chroma_url: ChromaOption = None,
    database_url: DatabaseOption = None,
) -> None:
    """Write a namespace as JSON Lines: its memories, edges, root units and added items."""
    context = _context(store, chroma_url, database_url)
    _known_namespace(context, namespace)
    written = export_namespace(context.store(), namespace, out)
    console.print(f"wrote {_counts(written)} of {namespace!r} to {out}")


@app.command("import")
def import_memories(
    path: Annotated[
        Path,
        typer.Argument(exists=True, dir_okay=False, help="A file `ripplegraph export` wrote."),
    ],
    store: StoreOption = None,
    chroma_url: ChromaOption = None,
    database_url: DatabaseOption = None,
) -> None:
    """Restore an exported namespace (same ids) into a store where it holds nothing yet."""
    restored = import_namespace(_context(store, chroma_url, database_url).store(), path)
    console.print(f"restored {_counts(restored)} into {restored.namespace!r}")


def _counts(done: Transferred) -> str:
    return ", ".join(f"{n} {kind}s" for kind, n in done.counts.items()) or "nothing"


class Transport(StrEnum):
    """How ``ripplegraph mcp`` talks to its clients."""

    STDIO = "stdio"
    STREAMABLE_HTTP = "streamable-http"


@app.command()
def mcp(
    namespace: NamespaceOption,
    transport: Annotated[
        Transport,
        typer.Option(
            "--transport",
            help="stdio (a client starts this process) or streamable-http (a local server).",
        ),
    ] = Transport.STDIO,
    host: Annotated[str, typer.Option("--host", help="streamable-http: address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="streamable-http: port.")] = 8000,
    speaker: Annotated[
        str, typer.Option("--speaker", help="Whose words `remember` stores.")
    ] = "User",
    store: StoreOption = None,
    chroma_url: ChromaOption = None,
    database_url: DatabaseOption = None,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
) -> None:
    """Serve one namespace to MCP clients: tools recall, remember and forget.

    The namespace is this command's, never a tool argument: a model cannot reach another.
    Needs the ``mcp`` extra.
    """
    try:
        from ripplegraph.agent.mcp_server import build_server
    except ImportError as error:
        message = f"the mcp extra is not installed ({error}): pip install 'ripplegraph[mcp]'"
        raise _fail(message) from error
    context = _context(store, chroma_url, database_url, model, base_url, user_name=speaker)
    server = build_server(_items(context), namespace, speaker=speaker)
    if transport is Transport.STDIO:
        server.run("stdio")
    else:
        server.run("streamable-http", host=host, port=port)


@app.command()
def ui(
    namespace: Annotated[
        list[str] | None,
        typer.Option(
            "--namespace",
            "-n",
            help="Serve only this namespace (repeatable) \\[default: every namespace].",
        ),
    ] = None,
    store: StoreOption = None,
    chroma_url: ChromaOption = None,
    database_url: DatabaseOption = None,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    host: Annotated[
        str,
        typer.Option("--host", help="Address to listen on; off loopback needs --access-token."),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port.")] = 8765,
    access_token: Annotated[
        str | None,
        typer.Option(
            "--access-token",
            envvar="RIPPLEGRAPH_UI_TOKEN",
            help="Token every page asks for first (required when --host is not loopback).",
        ),
    ] = None,
) -> None:
    """Browse and correct what the store remembers, in a web browser (local by default)."""
    try:
        import uvicorn

        from ripplegraph.agent.ui.app import LOOPBACK, create_app
    except ImportError as error:
        raise _fail(
            f"the memory browser needs the 'ui' extra ({error.name} is missing): "
            "pip install -c constraints.txt 'ripplegraph[ui]'"
        ) from error
    if host not in LOOPBACK and not access_token:
        raise _fail(
            f"--host {host} is not loopback: give --access-token (or RIPPLEGRAPH_UI_TOKEN) so "
            "that only people holding it can read and change these memories"
        )
    context = _context(store, chroma_url, database_url, model, base_url)
    for name in namespace or ():
        _known_namespace(context, name)
    browser = create_app(
        context,
        namespaces=frozenset(namespace) if namespace else None,
        access_token=access_token,
        host=host,
    )
    shown = f"[{host}]" if ":" in host else host
    errors.print(f"memory browser on http://{shown}:{port}/ (Ctrl-C stops it)")
    uvicorn.run(browser, host=host, port=port, log_level="warning")


@app.command()
def check(
    repair: Annotated[
        bool, typer.Option("--repair", help="Remove leftovers and link pending memories.")
    ] = False,
    store: StoreOption = None,
    chroma_url: ChromaOption = None,
    database_url: DatabaseOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Cross-check the store: exit 0 when consistent, 1 when it holds broken references.

    With ``--repair`` the report is what was found; the store is checked again afterwards,
    and the exit status is that second check's.
    """
    from ripplegraph.agent.linking import link_units

    context = _context(store, chroma_url, database_url)
    memory = context.store()
    report = memory.check(repair=repair)
    consistent = report.consistent
    if repair:
        for namespace, pending in report.pending_links.items():
            link_units(memory, namespace, pending, context.deployment.building.linking)
        consistent = memory.check().consistent
    if as_json:
        payload = {
            "consistent": report.consistent,
            "units": report.units,
            "namespaces": report.namespaces,
            "problems": report.problems,
            "leftovers": report.leftovers,
            "pending_links": {ns: len(ids) for ns, ids in report.pending_links.items()},
            "repaired": report.repaired,
            "consistent_now": consistent,
        }
        typer.echo(json.dumps(payload))
    else:
        table = Table(title=f"store {context.deployment.store_dir}", show_header=False)
        table.add_row("memory units", str(report.units))
        table.add_row("namespaces with memories", str(report.namespaces))
        for name, count in {**report.problems, **report.leftovers}.items():
            table.add_row(name, str(count))
        table.add_row(
            "memories waiting for links", str(sum(map(len, report.pending_links.values())))
        )
        console.print(table)
        verdict = "consistent" if report.consistent else "INCONSISTENT"
        if repair:
            verdict += "; after repair: " + ("consistent" if consistent else "STILL INCONSISTENT")
        console.print(verdict)
    if not consistent:
        raise typer.Exit(code=1)


@app.command()
def compact(
    store: StoreOption = None,
    chroma_url: ChromaOption = None,
    database_url: DatabaseOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Close the erasure window now: remove what forgets left in Chroma's and PostgreSQL's files.

    A forget erases at once what costs what it forgets (rows of graph.sqlite, stored threads,
    vector rows); a collection's index files, Chroma's catalog and PostgreSQL's table files
    keep the forgotten bytes until a compaction, which a running store makes within its
    erasure window (RIPPLEGRAPH_ERASURE_WINDOW minutes, 10 by default).  This one also moves
    every namespace too small for a collection of its own (a store of an earlier version
    keeps one per namespace) into rows.
    """
    context = _context(store, chroma_url, database_url)
    memory = context.store()
    done = memory.compact(demotions=None)
    if as_json:
        typer.echo(
            json.dumps(
                {"settled": done.settled, "demoted": len(done.demoted), "seconds": done.seconds}
            )
        )
        return
    console.print(
        f"compacted {len(done.settled)} part(s) and moved {len(done.demoted)} namespace(s) "
        f"into rows in {done.seconds:.2f} s"
    )


if __name__ == "__main__":
    app()


def _users_path(users_file: Path | None, store: Path | None) -> Path:
    if users_file is not None:
        return users_file
    return Path(store) / "users.json" if store is not None else auth.users_file()


@users.command("add")
def add_user(
    identity: Annotated[str, typer.Argument(help="The user's identity (their namespace too).")],
    namespace: Annotated[
        str | None, typer.Option("--namespace", "-n", help="Their namespace \\[default: identity].")
    ] = None,
    users_file: UsersFileOption = None,
    store: StoreOption = None,
) -> None:
    """Add a user (or rotate their token) and print their bearer token, once."""
    path = _users_path(users_file, store)
    token = auth.add_user(path, identity, namespace)
    errors.print(f"added {identity!r} to {path}; their token (shown only now):")
    typer.echo(token)


@users.command("remove")
def remove_user(
    identity: Annotated[str, typer.Argument(help="The user to remove.")],
    users_file: UsersFileOption = None,
    store: StoreOption = None,
) -> None:
    """Remove a user's access (their memories stay until `ripplegraph forget --all`)."""
    path = _users_path(users_file, store)
    if not auth.remove_user(path, identity):
        raise _fail(f"no user {identity!r} in {path}")
    console.print(f"removed {identity!r} from {path}")


@users.command("list")
def list_users(users_file: UsersFileOption = None, store: StoreOption = None) -> None:
    """The users and their namespaces (tokens are stored only as digests)."""
    path = _users_path(users_file, store)
    table = Table(title=f"users in {path}")
    table.add_column("identity")
    table.add_column("namespace")
    for user in auth.load_users(path):
        table.add_row(user.identity, user.namespace)
    console.print(table)
