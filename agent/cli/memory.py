"""Verbs that change or move what a store holds: ingest, add, list, forget, export, import."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Column, Table

from ripplegraph.agent.cli.app import (
    MEMORY,
    BaseUrlOption,
    ChromaOption,
    DatabaseOption,
    JsonOption,
    ModelOption,
    NamespaceOption,
    StoreOption,
    app,
    console,
    context_of,
    errors,
    fail,
    named,
    store_of,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ripplegraph.agent.context import Deployed
    from ripplegraph.agent.memory import Session
    from ripplegraph.agent.store.transfer import Transferred
    from ripplegraph.agent.surfaces.api import Remembered
    from ripplegraph.agent.surfaces.langgraph_store import RippleGraphStore


def ingest_sessions(
    sessions: Sequence[Session], namespace: str, context: Deployed, *, show_progress: bool
) -> Remembered:
    """``remember`` with a progress bar on stderr."""
    from ripplegraph.agent.memory.items import name_of
    from ripplegraph.agent.surfaces.api import remember

    with Progress(
        TextColumn("ingest {task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("turns"),
        TimeElapsedColumn(),
        console=errors,
        disable=not show_progress,
        transient=True,
    ) as progress:
        task = progress.add_task(name_of(namespace), total=sum(len(s.turns) for s in sessions))
        return remember(sessions, namespace, context, lambda turns: progress.advance(task, turns))


def summary_table(summary: Remembered) -> Table:
    """What an ingest wrote, as a table."""
    from ripplegraph.agent.memory.items import name_of
    from ripplegraph.agent.store import LINK_TYPES

    table = Table(title=f"namespace {name_of(summary.namespace)}", show_header=False)
    table.add_row("memory units", str(summary.units))
    table.add_row("new units", str(summary.new_units))
    for edge_type in LINK_TYPES:
        table.add_row(f"{edge_type} edges", str(summary.edges.get(edge_type, 0)))
    table.add_row("seconds", f"{summary.seconds:.1f}")
    return table


@app.command(rich_help_panel=MEMORY)
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
    from ripplegraph.agent.memory.ingest_files import load_sessions
    from ripplegraph.agent.services import Services
    from ripplegraph.agent.store import LINK_TYPES

    sessions = load_sessions(file)
    context = context_of(store, chroma_url, database_url, model, base_url)
    Services(context.deployment).caller()  # a model that cannot be made fails before any write
    stored = named(context, namespace, held=False)
    summary = ingest_sessions(sessions, stored, context, show_progress=not as_json)
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
        console.print(summary_table(summary))


def items_of(context: Deployed) -> RippleGraphStore:
    """The deployment as a LangGraph store: what ``add``, ``list`` and MCP go through."""
    from ripplegraph.agent.surfaces.langgraph_store import RippleGraphStore

    return RippleGraphStore(deployment=context.deployment, context=context)


@app.command(rich_help_panel=MEMORY)
def add(
    namespace: NamespaceOption,
    text: Annotated[str, typer.Argument(help="What was said; '-' reads it from stdin.")] = "-",
    speaker: Annotated[str, typer.Option("--speaker", help="Who said it.")] = "User",
    session: Annotated[
        str | None, typer.Option("--session", help="The session it belongs to.")
    ] = None,
    date: Annotated[
        str | None, typer.Option("--date", help="When it was said (ISO 8601) [default: now].")
    ] = None,
    store: StoreOption = None,
    chroma_url: ChromaOption = None,
    database_url: DatabaseOption = None,
) -> None:
    """Remember one thing said, as Memory.add does; prints the id to forget it by.

    A long text is remembered as several memories of one item (one id).
    """
    from ripplegraph.agent.memory.items import checked_said, labels_of
    from ripplegraph.agent.surfaces.langgraph_store import add_said

    labels_of(namespace)  # a name no surface can hold is refused before anything is read
    if text == "-" and sys.stdin.isatty():
        raise fail("nothing to add: give the text, or pipe it in with '-'")
    words = checked_said(sys.stdin.read() if text == "-" else text)
    context = context_of(store, chroma_url, database_url)
    items = items_of(context)
    stored = named(context, namespace, held=False)
    key = uuid.uuid4().hex
    try:
        add_said(items, stored, words, speaker=speaker, session=session, date=date, key=key)
    except KeyboardInterrupt:  # an interrupt after the put was saved: what is kept is said
        if items.memory.items(stored, [key]):
            typer.echo(key)
        raise
    typer.echo(key)


@app.command("list", rich_help_panel=MEMORY)
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
    from ripplegraph.agent.memory.items import tuple_of, value_text

    context = context_of(store, chroma_url, database_url, reading=True)
    stored = named(context, namespace)
    items = items_of(context).list_named(tuple_of(stored), limit, offset)
    if as_json:
        typer.echo(json.dumps([item.dict() for item in items], ensure_ascii=False))
        return
    table = Table(Column("id", no_wrap=True, min_width=32), "updated", "memory")
    for item in items:
        table.add_row(item.key, f"{item.updated_at:%Y-%m-%d %H:%M}", value_text(item.value))
    console.print(table)


@app.command("namespaces", rich_help_panel=MEMORY)
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
    from ripplegraph.agent.memory.items import name_of, namespace_named

    memory = store_of(context_of(store, chroma_url, database_url, reading=True))
    under = namespace_named(prefix) if prefix is not None else None
    table = Table("namespace", "memories", "added items")
    for namespace in memory.holding_namespaces(under, limit, offset):
        table.add_row(
            name_of(namespace),
            str(memory.count_units(namespace)),
            str(len(memory.items(namespace))),
        )
    console.print(table)


@app.command(rich_help_panel=MEMORY)
def forget(
    namespace: NamespaceOption,
    memory_id: Annotated[
        list[str] | None,
        typer.Option("--memory-id", metavar="<str>", help="A memory id (repeatable)."),
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
    as_json: JsonOption = False,
) -> None:
    """Forget memories everywhere, down to the bytes under the store, before it returns.

    Vectors, texts, BM25, cue index, edges and root evidence go, and so does every stored
    recall thread that quoted them (purged whole); SQLite's deleted rows are zeroed and its
    write-ahead log truncated.  What a forget leaves in Chroma's index files and catalog or in
    PostgreSQL's table files is compacted before the command ends (a long-running process
    does that within its erasure window; see compact).
    """
    from ripplegraph.agent.surfaces.api import forget_now

    context = context_of(store, chroma_url, database_url, reading=True)
    stored = named(context, namespace)
    forgotten = forget_now(
        context,
        stored,
        memory_ids=memory_id or (),
        session=session,
        person=person,
        everything=everything,
    )
    if not forgotten and not everything:
        chosen = f"session {session!r}" if session is not None else f"person {person!r}"
        raise fail(f"nothing to forget: no memory in {namespace!r} is of {chosen}")
    remaining = store_of(context).count_units(stored)
    if as_json:
        typer.echo(json.dumps({"forgotten": forgotten, "remaining": remaining}))
        return
    console.print(f"forgot {_many(len(forgotten), 'memory')} in {namespace!r}; {remaining} remain")


@app.command("export", rich_help_panel=MEMORY)
def export_memories(
    namespace: NamespaceOption,
    out: Annotated[Path, typer.Option("--out", help="The JSON Lines file to write.")],
    store: StoreOption = None,
    chroma_url: ChromaOption = None,
    database_url: DatabaseOption = None,
) -> None:
    """Write a namespace as JSON Lines: its memories, edges, root units and added items."""
    from ripplegraph.agent.store.transfer import export_namespace

    context = context_of(store, chroma_url, database_url, reading=True)
    written = export_namespace(store_of(context), named(context, namespace), out)
    console.print(f"wrote {_counts(written)} of {namespace!r} to {out}")


@app.command("import", rich_help_panel=MEMORY)
def import_memories(
    path: Annotated[
        Path,
        typer.Argument(exists=True, dir_okay=False, help="A file 'ripplegraph export' wrote."),
    ],
    store: StoreOption = None,
    chroma_url: ChromaOption = None,
    database_url: DatabaseOption = None,
) -> None:
    """Restore an exported namespace (same ids) into a store where it holds nothing yet."""
    from ripplegraph.agent.memory.items import name_of
    from ripplegraph.agent.store.transfer import import_namespace

    restored = import_namespace(store_of(context_of(store, chroma_url, database_url)), path)
    console.print(f"restored {_counts(restored)} into {name_of(restored.namespace)!r}")


def _many(count: int, thing: str) -> str:
    """``1 memory``, ``2 memories``: a count and its noun."""
    if count == 1:
        return f"1 {thing}"
    return f"{count} {thing[:-1]}ies" if thing.endswith("y") else f"{count} {thing}s"


def _counts(done: Transferred) -> str:
    return ", ".join(_many(n, kind) for kind, n in done.counts.items()) or "nothing"
