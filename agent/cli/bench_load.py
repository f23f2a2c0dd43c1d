"""The load benchmarks: one namespace growing, a steady mixed load, many users, a terminal.

They measure where each cost goes as the store grows (``scale``), as time and churn
accumulate (``soak``) and as users are added (``tenants``), in ratios from one run, and how
long the command line makes a person wait (``cli``).
"""

from __future__ import annotations

from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Annotated, Any

import typer

from ripplegraph.agent.cli.bench import (
    ChartsOption,
    OutOption,
    ResultsOption,
    StoreOption,
    bench,
)


@bench.command("scale")
def scale(
    data: Annotated[
        Path,
        typer.Option(
            "--data",
            help="LoCoMo's data/locomo10.json (github.com/snap-research/locomo), every "
            "conversation ingested into one namespace.",
        ),
    ],
    units: Annotated[str, typer.Option("--units", help="Namespace sizes.")] = "10000,100000",
    queries: Annotated[int, typer.Option("--queries", help="Timed questions per size.")] = 50,
    turns: Annotated[int, typer.Option("--turns", help="Write→recall turns per size.")] = 30,
    store: StoreOption = None,
    out: OutOption = None,
    results_dir: ResultsOption = None,
    charts: ChartsOption = True,
    database_url: Annotated[
        str | None,
        typer.Option(
            "--database-url",
            help="Also run every size with the relational side on this PostgreSQL database "
            "(its 'scale' namespace is dropped first), reported beside SQLite's.",
        ),
    ] = None,
) -> None:
    """One namespace grown to each size: recall, floor, write→recall, memory; ingest speed."""
    from ripplegraph.agent.eval import report
    from ripplegraph.agent.eval.conversations import load_conversations
    from ripplegraph.agent.eval.runs import bench_store, progress_bar, publish
    from ripplegraph.agent.eval.scale import run_scale

    sizes = [int(n) for n in units.split(",")]
    dataset = load_conversations([data])
    with bench_store(store) as context, progress_bar("scale", len(sizes)) as advance:
        results = run_scale(context, dataset, sizes, queries, turns, advance)
    if database_url:
        with (
            bench_store(None, database_url) as remote,
            progress_bar("scale", len(sizes)) as advance,
        ):
            results["postgresql"] = run_scale(remote, dataset, sizes, queries, turns, advance)
    publish(
        "scale",
        results,
        report.scale_markdown(results),
        report.scale_chart,
        results_dir,
        out,
        charts,
    )


ChromaUrlOption = Annotated[
    str | None,
    typer.Option("--chroma-url", help="Keep the vectors on this Chroma server (served)."),
]
DatabaseUrlOption = Annotated[
    str | None,
    typer.Option("--database-url", help="Keep the relational side in this PostgreSQL database."),
]
ThresholdOption = Annotated[
    int | None,
    typer.Option(
        "--collection-threshold",
        help="Memories a namespace keeps in rows before it gets a Chroma collection "
        "(0: every namespace its own) [default: the store's].",
    ),
]


def _backend(chroma_url: str | None, collection_threshold: int | None) -> dict[str, Any]:
    """The deployment settings a load bench was given (a threshold only when one was)."""
    settings: dict[str, Any] = {"chroma_url": chroma_url}
    if collection_threshold is not None:
        settings["collection_threshold"] = collection_threshold
    return settings


def _named(bench_name: str, chroma_url: str | None, database_url: str | None) -> str:
    """A load bench's results name: ``_served`` when a server keeps part of the store."""
    return bench_name + ("_served" if chroma_url or database_url else "")


@bench.command("soak")
def soak(
    users: Annotated[int, typer.Option("--users", help="Users, each one namespace.")] = 100,
    memories: Annotated[int, typer.Option("--memories", help="Memories each user holds.")] = 200,
    minutes: Annotated[float, typer.Option("--minutes", help="Length of the load.")] = 30.0,
    rate: Annotated[float, typer.Option("--rate", help="Operations per second.")] = 10.0,
    ttl_minutes: Annotated[
        float, typer.Option("--ttl-minutes", help="Time to live of the puts that have one.")
    ] = 2.0,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the load's draws.")] = 0,
    store: StoreOption = None,
    chroma_url: ChromaUrlOption = None,
    database_url: DatabaseUrlOption = None,
    collection_threshold: ThresholdOption = None,
    out: OutOption = None,
    results_dir: ResultsOption = None,
    charts: ChartsOption = True,
) -> None:
    """A steady mixed load through RippleGraphStore: memory, latency drift, errors, erasure."""
    from ripplegraph.agent.eval.runs import bench_store, progress_bar, publish
    from ripplegraph.agent.eval.soak import SoakPlan, run_soak, soak_chart, soak_markdown

    plan = SoakPlan(users, memories, minutes, rate, ttl_minutes, seed)
    settings = _backend(chroma_url, collection_threshold)
    ticks = max(1, int(minutes * 6))  # one every ten seconds
    with (
        bench_store(store, database_url, **settings) as context,
        progress_bar("soak", ticks) as advance,
    ):
        results = run_soak(context, plan, advance)
    name = _named("soak", chroma_url, database_url)
    publish(name, results, soak_markdown(results), soak_chart, results_dir, out, charts)


@bench.command("tenants")
def tenants(
    users: Annotated[str, typer.Option("--users", help="Numbers of users.")] = "200,2000,20000",
    memories: Annotated[int, typer.Option("--memories", help="Memories each user holds.")] = 10,
    samples: Annotated[
        int, typer.Option("--samples", help="Timed adds and recalls per size.")
    ] = 100,
    store: StoreOption = None,
    chroma_url: ChromaUrlOption = None,
    database_url: DatabaseUrlOption = None,
    collection_threshold: ThresholdOption = None,
    out: OutOption = None,
    results_dir: ResultsOption = None,
    charts: ChartsOption = True,
) -> None:
    """Many users in one store: memory, disk, add and recall, listing, forget, cold start."""
    from ripplegraph.agent.eval.runs import bench_store, progress_bar, publish
    from ripplegraph.agent.eval.tenants import run_tenants, tenants_chart, tenants_markdown

    sizes = sorted(int(n) for n in users.split(","))
    settings = _backend(chroma_url, collection_threshold)
    with (
        bench_store(store, database_url, **settings) as context,
        progress_bar("tenants", len(sizes)) as advance,
    ):
        results = run_tenants(context, sizes, memories, samples, advance)
    publish(
        _named("tenants", chroma_url, database_url),
        results,
        tenants_markdown(results),
        tenants_chart,
        results_dir,
        out,
        charts,
    )


@bench.command("cli")
def cli(
    repeats: Annotated[int, typer.Option("--repeats", min=1, help="Runs of each verb.")] = 5,
    store: StoreOption = None,
    out: OutOption = None,
    results_dir: ResultsOption = None,
    charts: ChartsOption = True,
) -> None:
    """The command line's wall clock: each verb cold (a new process) and warm, with goals."""
    from ripplegraph.agent.eval import report
    from ripplegraph.agent.eval.cli_timings import COLD, run_cli_timings
    from ripplegraph.agent.eval.runs import progress_bar, publish

    with TemporaryDirectory(prefix="ripplegraph-cli-") as scratch:
        where = store or Path(scratch) / "store"
        with progress_bar("cli", len(COLD) + 1) as advance:
            results = run_cli_timings(where, repeats, advance)
    publish(
        "cli", results, report.cli_markdown(results), report.cli_chart, results_dir, out, charts
    )
