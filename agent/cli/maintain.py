"""Verbs that look after a store: check it, close its erasure window, calibrate its edges."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from ripplegraph.agent.cli.app import (
    INSPECT,
    ChromaOption,
    DatabaseOption,
    JsonOption,
    NamespaceOption,
    StoreOption,
    app,
    console,
    context_of,
    fail,
    named,
    store_of,
)
from ripplegraph.agent.cli.memory import items_of


@app.command(rich_help_panel=INSPECT)
def check(
    repair: Annotated[
        bool,
        typer.Option(
            "--repair",
            help="Remove leftovers, finish puts cut short, withdraw puts set aside, link "
            "pending memories.",
        ),
    ] = False,
    store: StoreOption = None,
    chroma_url: ChromaOption = None,
    database_url: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Cross-check the store: exit 0 when consistent, 1 when it holds broken references.

    With --repair the report is what was found; the store is checked again afterwards, and
    the exit status is that second check's.
    """
    from ripplegraph.agent.decisions.linking import link_units

    context = context_of(store, chroma_url, database_url, reading=True)
    memory = store_of(context)
    report = memory.check(repair=repair)
    consistent = report.consistent
    if repair:
        items = items_of(context)
        items.finish_puts()
        items.withdraw_puts()
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


@app.command(rich_help_panel=INSPECT)
def compact(
    store: StoreOption = None,
    chroma_url: ChromaOption = None,
    database_url: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Close the erasure window now: remove what forgets left in Chroma's and PostgreSQL's files.

    A forget erases at once what costs what it forgets (rows of graph.sqlite, stored threads,
    vector rows); a collection's index files, Chroma's catalog and PostgreSQL's table files
    keep the forgotten bytes until a compaction, which a running store makes within its
    erasure window (RIPPLEGRAPH_ERASURE_WINDOW minutes, 10 by default).  This one also moves
    every namespace too small for a collection of its own (a store of an earlier version
    keeps one per namespace) into rows.
    """
    memory = store_of(context_of(store, chroma_url, database_url, reading=True))
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


@app.command(rich_help_panel=INSPECT)
def calibrate(
    namespace: NamespaceOption,
    store: StoreOption = None,
    chroma_url: ChromaOption = None,
    database_url: DatabaseOption = None,
) -> None:
    """Print the cosine distribution that the semantic-edge threshold is calibrated from."""
    from ripplegraph.agent.decisions.linking import similarity_profile

    context = context_of(store, chroma_url, database_url, reading=True)
    memory = store_of(context)
    stored = named(context, namespace)
    if memory.count_units(stored) < 2:
        raise fail(f"namespace {namespace!r} has fewer than two memories")
    profile = similarity_profile(memory, stored)
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
