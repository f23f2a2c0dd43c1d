"""``ripplegraph bench …``: run a benchmark, print its table, write JSON, Markdown and charts."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markdown import Markdown
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ripplegraph.agent.context import Deployed, Deployment, ModelSettings
from ripplegraph.agent.eval import report
from ripplegraph.agent.eval.systems import SYSTEMS
from ripplegraph.agent.llm import RoleCaller
from ripplegraph.agent.memory import Session
from ripplegraph.agent.services import Services

bench = typer.Typer(help="Benchmarks, side by side with the baselines, in one run.")
console = Console()
errors = Console(stderr=True)

ResultsOption = Annotated[
    Path | None,
    typer.Option(
        "--results",
        help="Folder for the run's JSON, Markdown, PNG and per-question files \\[default: "
        "beside --out, else a new folder named for the run in the current directory].",
    ),
]
StoreOption = Annotated[
    Path | None,
    typer.Option("--store", help="Bench store directory (reused if present) \\[default: temp]."),
]
SystemsOption = Annotated[
    str, typer.Option("--systems", help="Comma-separated systems: " + ", ".join(SYSTEMS))
]
LimitOption = Annotated[
    int | None, typer.Option("--limit", help="Only the first N questions (or records per form).")
]
OutOption = Annotated[
    Path | None, typer.Option("--out", help="Write the results' JSON to this file too.")
]
ChartsOption = Annotated[bool, typer.Option("--charts/--no-charts", help="Write PNG charts.")]
ALL_SYSTEMS = ",".join(SYSTEMS)
DEFAULT_WORKERS = min(os.cpu_count() or 1, 4)


def _systems(value: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in value.split(",") if n.strip())
    unknown = [n for n in names if n not in SYSTEMS]
    if unknown:
        errors.print(f"[red]error:[/red] unknown systems {unknown}; choose from {SYSTEMS}")
        raise typer.Exit(code=2)
    return names


_OFFLINE = ModelSettings(model=None, base_url=None)
"""A bench's systems recall offline, whatever the environment names."""


@contextmanager
def _store(
    store: Path | None, database_url: str | None = None, **settings: Any
) -> Iterator[Deployed]:
    """A bench deployment at ``store`` (else a temporary one), with any other settings."""
    # The retrieval systems are measured with the offline policies, whatever the environment.
    if store is not None:
        yield Deployment(
            store_dir=str(store), database_url=database_url, llm=_OFFLINE, **settings
        ).bind()
        return
    with tempfile.TemporaryDirectory(prefix="ripplegraph-bench-") as scratch:
        where = str(Path(scratch) / "store")
        yield Deployment(
            store_dir=where, database_url=database_url, llm=_OFFLINE, **settings
        ).bind()


@contextmanager
def _progress(label: str, total: int) -> Iterator[Callable[[], None]]:
    with Progress(
        TextColumn(f"[bold]{label}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=errors,
        transient=True,
    ) as progress:
        task = progress.add_task(label, total=total)
        yield lambda: progress.advance(task)


def _publish(
    name: str,
    results: dict[str, Any],
    markdown: str,
    chart: Callable[[dict[str, Any], Path], None],
    results_dir: Path | None,
    out: Path | None,
    charts: bool,
) -> None:
    """Write the run's files where they were asked for, never into a folder not named.

    Without ``--results`` they go beside ``--out``, else into a new folder in the current
    directory named for the run: a run on other data cannot overwrite published results.
    """
    if results_dir is None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        results_dir = out.parent if out is not None else Path(f"bench-{name}-{stamp}")
    results_dir.mkdir(parents=True, exist_ok=True)
    summary = {k: v for k, v in results.items() if k != "details"}
    stem = results_dir / f"bench_{name}"
    report.write_json(summary, stem.with_suffix(".json"))
    if "details" in results:
        # Per-question records quote the dataset: kept beside the results, never committed.
        report.write_json(results["details"], results_dir / f"bench_{name}_questions.json")
    stem.with_suffix(".md").write_text(markdown + "\n", encoding="utf-8")
    if out is not None:
        report.write_json(summary, out)
    if charts:
        chart(results, stem.with_suffix(".png"))
    console.print(Markdown(markdown))
    console.print(f"results: {stem}.{{json,md{',png' if charts else ''}}}")


@contextmanager
def _ingested(
    store: Path | None,
    sessions: Mapping[str, Sequence[Session]],
    what: str,
    llm: str | None,
    base_url: str | None,
) -> Iterator[tuple[Deployed, RoleCaller | None]]:
    """The bench store with every namespace ingested, and the ``--llm`` answerer if any."""
    from ripplegraph.agent.eval.systems import ingest_namespaces

    with _store(store) as context:
        errors.print(f"ingesting {what} …")
        ingest_namespaces(sessions, context)
        yield (
            context,
            Services(
                context.deployment.model_copy(
                    update={"llm": ModelSettings(model=llm, base_url=base_url)}
                )
            ).caller(),
        )


LlmOption = Annotated[
    str | None,
    typer.Option(
        "--llm",
        help="Also answer from each system's top 30 with this model: LoCoMo answers graded "
        "by the same model as judge (Judge, F1); IMLogic picks one of four shuffled options "
        "(accuracy, traps taken). Not run in CI.",
    ),
]
LlmBaseUrlOption = Annotated[
    str | None,
    typer.Option("--base-url", envvar="OPENAI_BASE_URL", help="OpenAI-compatible endpoint."),
]


@bench.command("locomo")
def locomo(
    data: Annotated[Path, typer.Option("--data", help="LoCoMo locomo10.json-format file.")],
    store: StoreOption = None,
    systems: SystemsOption = ALL_SYSTEMS,
    limit: LimitOption = None,
    out: OutOption = None,
    results_dir: ResultsOption = None,
    charts: ChartsOption = True,
    llm: LlmOption = None,
    base_url: LlmBaseUrlOption = None,
) -> None:
    """Evidence recall R@K / All@K per category, latency and context size, per system."""
    from ripplegraph.agent.eval.locomo import load_locomo, miss_analysis, run_locomo

    names = _systems(systems)
    dataset = load_locomo(data, limit)
    turns = f"{dataset.counts['turns']} turns"
    with _ingested(store, dataset.sessions, turns, llm, base_url) as (context, answerer):
        with _progress("locomo", len(names) * len(dataset.questions)) as advance:
            results = run_locomo(dataset, context, names, advance, answerer)
        results["analysis"] = miss_analysis(dataset, context, results)
    _publish(
        "locomo",
        results,
        report.locomo_markdown(results),
        report.locomo_chart,
        results_dir,
        out,
        charts,
    )


@bench.command("imlogic")
def imlogic(
    data: Annotated[
        Path, typer.Option("--data", help="IMLogic folder of qa_user*.json files, or one file.")
    ],
    store: StoreOption = None,
    systems: SystemsOption = ALL_SYSTEMS,
    limit: LimitOption = None,
    out: OutOption = None,
    results_dir: ResultsOption = None,
    charts: ChartsOption = True,
    llm: LlmOption = None,
    base_url: LlmBaseUrlOption = None,
) -> None:
    """memory_l R@K and rank above the distractor, per category and query type, per system."""
    from ripplegraph.agent.eval.imlogic import load_imlogic, run_imlogic

    names = _systems(systems)
    try:
        dataset = load_imlogic(data, limit)
    except (OSError, ValueError, KeyError) as error:
        errors.print(f"[red]error:[/red] cannot read IMLogic data at {data}: {error}")
        raise typer.Exit(code=2) from error
    memories = f"{dataset.counts['memories']} memories"
    with (
        _ingested(store, dataset.sessions, memories, llm, base_url) as (context, answerer),
        _progress("imlogic", len(names) * len(dataset.questions)) as advance,
    ):
        results = run_imlogic(dataset, context, names, advance, answerer)
    _publish(
        "imlogic",
        results,
        report.imlogic_markdown(results),
        report.imlogic_chart,
        results_dir,
        out,
        charts,
    )


@bench.command("prefeval")
def prefeval(
    data: Annotated[Path, typer.Option("--data", help="PrefEval benchmark_dataset folder.")],
    store: StoreOption = None,
    systems: SystemsOption = ALL_SYSTEMS,
    fillers: Annotated[str, typer.Option("--fillers", help="Filler turn counts N.")] = "10,100,300",
    limit: LimitOption = None,
    workers: Annotated[
        int,
        typer.Option("--workers", min=1, help="Processes, each scoring records in its own store."),
    ] = DEFAULT_WORKERS,
    out: OutOption = None,
    results_dir: ResultsOption = None,
    charts: ChartsOption = True,
) -> None:
    """Hit@5 / Hit@10 of the preference turn, by form and filler count, per system."""
    from ripplegraph.agent.eval.prefeval import load_records, run_prefeval

    names = _systems(systems)
    counts = tuple(int(n) for n in fillers.split(","))
    with _store(store) as context:
        records = load_records(data, limit)
        with _progress("prefeval", len(records)) as advance:
            results = run_prefeval(data, context, names, records, counts, advance, workers)
    _publish(
        "prefeval",
        results,
        report.prefeval_markdown(results),
        report.prefeval_chart,
        results_dir,
        out,
        charts,
    )


@bench.command("scale")
def scale(
    data: Annotated[Path, typer.Option("--data", help="LoCoMo file ingested into one namespace.")],
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
    from ripplegraph.agent.eval.locomo import load_locomo
    from ripplegraph.agent.eval.scale import run_scale

    sizes = [int(n) for n in units.split(",")]
    dataset = load_locomo(data)
    with _store(store) as context, _progress("scale", len(sizes)) as advance:
        results = run_scale(context, dataset, sizes, queries, turns, advance)
    if database_url:
        with _store(None, database_url) as remote, _progress("scale", len(sizes)) as advance:
            results["postgresql"] = run_scale(remote, dataset, sizes, queries, turns, advance)
    _publish(
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
        "(0: every namespace its own) \\[default: the store's].",
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
    from ripplegraph.agent.eval.soak import SoakPlan, run_soak, soak_chart, soak_markdown

    plan = SoakPlan(users, memories, minutes, rate, ttl_minutes, seed)
    settings = _backend(chroma_url, collection_threshold)
    ticks = max(1, int(minutes * 6))  # one every ten seconds
    with _store(store, database_url, **settings) as context, _progress("soak", ticks) as advance:
        results = run_soak(context, plan, advance)
    name = _named("soak", chroma_url, database_url)
    _publish(name, results, soak_markdown(results), soak_chart, results_dir, out, charts)


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
    from ripplegraph.agent.eval.tenants import run_tenants, tenants_chart, tenants_markdown

    sizes = sorted(int(n) for n in users.split(","))
    settings = _backend(chroma_url, collection_threshold)
    with (
        _store(store, database_url, **settings) as context,
        _progress("tenants", len(sizes)) as advance,
    ):
        results = run_tenants(context, sizes, memories, samples, advance)
    _publish(
        _named("tenants", chroma_url, database_url),
        results,
        tenants_markdown(results),
        tenants_chart,
        results_dir,
        out,
        charts,
    )
