"""The bench group, and its recall benchmarks: LoCoMo, IMLogic, PrefEval.

Each runs every system on the same data in one run, prints its table, and writes JSON,
Markdown and charts; its help names where the data comes from (the upstream file or folder
as published).  The load benchmarks are in ``bench_load``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ripplegraph.agent.cli.app import BENCH, app, fail, group
from ripplegraph.agent.eval.names import DEFAULT_VARIATIONS, SYSTEMS, Leave

if TYPE_CHECKING:
    from ripplegraph.agent.eval.conversations import LocomoData

bench = group(help="Benchmarks, side by side with the baselines, in one run.")
app.add_typer(bench, name="bench", rich_help_panel=BENCH)

ResultsOption = Annotated[
    Path | None,
    typer.Option(
        "--results",
        help="Folder for the run's JSON, Markdown, PNG and per-question files [default: "
        "beside --out, else a new folder named for the run in the current directory].",
    ),
]
StoreOption = Annotated[
    Path | None,
    typer.Option("--store", help="Bench store directory (reused if present) [default: temp]."),
]
SystemsOption = Annotated[
    str,
    typer.Option(
        "--systems",
        show_default=False,
        help="Comma-separated systems [default: all]: " + ", ".join(SYSTEMS),
    ),
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
        raise fail(f"unknown systems {unknown}; choose from {', '.join(SYSTEMS)}")
    return names


LocomoDataOption = Annotated[
    list[Path],
    typer.Option(
        "--data",
        metavar="<path>",
        help="Conversations (repeatable): LoCoMo's data/locomo10.json as published "
        "(github.com/snap-research/locomo) or a file of some of its conversations; "
        "REALTALK's data folder of Chat_*.json as published (github.com/danny911kr/REALTALK) "
        "or one of those files; Mem-Gallery's benchmark/data/dialog folder as published "
        "(github.com/ma-xueqian/Mem-Gallery) or one of its files.",
    ),
]
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
    data: LocomoDataOption,
    store: StoreOption = None,
    systems: SystemsOption = ALL_SYSTEMS,
    limit: LimitOption = None,
    out: OutOption = None,
    results_dir: ResultsOption = None,
    charts: ChartsOption = True,
    llm: LlmOption = None,
    base_url: LlmBaseUrlOption = None,
    exact_terms: Annotated[
        bool,
        typer.Option(
            "--exact-terms/--no-exact-terms",
            help="Also put 400 look-alike memories that differ by a reference code and count "
            "how often a search for a code finds its memory first.",
        ),
    ] = True,
) -> None:
    """Evidence recall R@K / All@K per category, latency and context size, per system."""
    from ripplegraph.agent.eval import report
    from ripplegraph.agent.eval.conversations import load_conversations
    from ripplegraph.agent.eval.exact_terms import probe, put_look_alikes
    from ripplegraph.agent.eval.locomo import miss_analysis, run_locomo
    from ripplegraph.agent.eval.runs import ingested, progress_bar, publish

    names = _systems(systems)
    dataset = load_conversations(data, limit)
    turns = f"{dataset.counts['turns']} turns"
    with ingested(store, dataset.sessions, turns, llm, base_url) as (context, answerer):
        with progress_bar("locomo", len(names) * len(dataset.questions)) as advance:
            results = run_locomo(dataset, context, names, advance, answerer)
        results["analysis"] = miss_analysis(dataset, context, results)
        if exact_terms:
            results["exact_terms"] = probe(context, put_look_alikes(context))
    publish(
        "locomo",
        results,
        report.locomo_markdown(results),
        report.locomo_chart,
        results_dir,
        out,
        charts,
    )


def _to_leave_out(data: list[Path], limit: int | None, who: str) -> LocomoData:
    """The conversations ``data`` names, refused unless two or more hold questions."""
    from ripplegraph.agent.eval.conversations import load_conversations

    dataset = load_conversations(data, limit)
    if len({q.namespace for q in dataset.questions}) < 2:
        raise fail(f"{who} at least two conversations with questions in --data")
    return dataset


@bench.command("folds")
def folds(
    data: LocomoDataOption,
    vary: Annotated[
        list[str] | None,
        typer.Option(
            "--vary",
            metavar="<field=v1,v2>",
            help="A setting and its values, FIELD=V1,V2 (repeatable): a recipe number or "
            "mechanism switch, or hops, rounds, refinements; F1=V+F2=W is one variant of "
            "several fields [default: " + " ".join(DEFAULT_VARIATIONS) + "].",
        ),
    ] = None,
    store: StoreOption = None,
    limit: LimitOption = None,
    out: OutOption = None,
    results_dir: ResultsOption = None,
    charts: ChartsOption = True,
) -> None:
    """Leave one conversation out: settings chosen on the others, scored on the one left."""
    from ripplegraph.agent.eval import report
    from ripplegraph.agent.eval.folds import run_folds, variants
    from ripplegraph.agent.eval.runs import ingested, progress_bar, publish

    try:
        chosen = variants(vary or DEFAULT_VARIATIONS)
    except ValueError as error:
        raise fail(f"--vary {error}") from error
    dataset = _to_leave_out(data, limit, "folds need")
    turns, runs = f"{dataset.counts['turns']} turns", (2 + len(chosen)) * len(dataset.questions)
    with (
        ingested(store, dataset.sessions, turns, None, None) as (context, _),
        progress_bar("folds", runs) as advance,
    ):
        results = run_folds(dataset, context, chosen, advance)
    publish(
        "folds", results, report.folds_markdown(results), report.folds_chart, results_dir, out,
        charts,
    )  # fmt: skip


@bench.command("ranker")
def ranker(
    data: LocomoDataOption,
    write: Annotated[
        Path | None,
        typer.Option(
            "--write",
            metavar="<file>",
            help="Write the ranker trained on every conversation here (the package ships "
            "agent/ranker.json, trained on the development conversations).",
        ),
    ] = None,
    write_walker: Annotated[
        Path | None,
        typer.Option(
            "--write-walker",
            metavar="<file>",
            help="Write the walk model trained on every conversation here (the package ships "
            "agent/walker.json, trained on the development conversations).",
        ),
    ] = None,
    vary: Annotated[
        str | None,
        typer.Option(
            "--vary",
            metavar="<field=value>",
            help="Judge recall with one setting changed, FIELD=VALUE (as bench folds takes "
            "it; F1=V+F2=W changes several): the pools, the hand-ranked run and every "
            "fold's ranker and walk model are made under it [default: the shipped "
            "settings].",
        ),
    ] = None,
    leave: Annotated[
        Leave,
        typer.Option(
            "--leave",
            help="What each fold leaves out: one conversation, or every conversation of one "
            "kind, so each kind is judged by models that never saw its kind (the estimate "
            "for a kind of conversation there is no sample of).",
        ),
    ] = Leave.CONVERSATION,
    store: StoreOption = None,
    limit: LimitOption = None,
    out: OutOption = None,
    results_dir: ResultsOption = None,
    charts: ChartsOption = True,
) -> None:
    """Train the learned ranker: left-out scores per kind against the first hop, and the model."""
    from ripplegraph.agent.eval import report
    from ripplegraph.agent.eval.folds import variants
    from ripplegraph.agent.eval.ranker import SHIPPED_SETTINGS, fold_of, run_ranker
    from ripplegraph.agent.eval.runs import ingested, progress_bar, publish

    for option, path in (("--write", write), ("--write-walker", write_walker)):
        if path is not None and not path.parent.is_dir():
            raise fail(f"{option} {path}: no folder {path.parent} to write it in")
    try:
        chosen = variants([vary]) if vary is not None else [SHIPPED_SETTINGS]
    except ValueError as error:
        raise fail(f"--vary {error}") from error
    if len(chosen) != 1:
        raise fail(f"--vary {vary!r}: one value (join fields with '+'), not a list")
    for option, path in (("--write", write), ("--write-walker", write_walker)):
        if path is not None and vary is not None:
            raise fail(f"{option} ships a model of the shipped settings: leave out --vary")
    dataset = _to_leave_out(data, limit, "the ranker needs")
    fold = fold_of(dataset, leave)
    if len(set(fold.values())) < 2:
        raise fail(f"--leave {leave}: the data holds one {leave}, nothing to train a fold on")
    # With a learned walk: the walks, then one capture per fold left out.
    captures = len(set(fold.values())) + 1
    passes = 4 + (captures if chosen[0].settings.learned_walk else 0)
    turns, runs = f"{dataset.counts['turns']} turns", passes * len(dataset.questions)
    with (
        ingested(store, dataset.sessions, turns, None, None) as (context, _),
        progress_bar("ranker", runs) as advance,
    ):
        results, trained = run_ranker(dataset, context, advance, chosen[0], leave)
    if write is not None:
        write.write_text(trained.ranker.to_json(), encoding="utf-8")
    publish(
        "ranker", results, report.ranker_markdown(results), report.ranker_chart, results_dir, out,
        charts,
    )  # fmt: skip
    if write_walker is not None:
        if trained.walker is None:
            raise fail("--write-walker: no walk reached a gold memory and another to learn from")
        write_walker.write_text(trained.walker.to_json(), encoding="utf-8")


@bench.command("imlogic")
def imlogic(
    data: Annotated[
        Path,
        typer.Option(
            "--data",
            help="IMLogic's dataset/qa folder of qa_user*.json files as published "
            "(github.com/daphneOdera-618/IMLogic), or one of those files.",
        ),
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
    from ripplegraph.agent.eval import report
    from ripplegraph.agent.eval.imlogic import load_imlogic, run_imlogic
    from ripplegraph.agent.eval.runs import ingested, progress_bar, publish

    names = _systems(systems)
    try:
        dataset = load_imlogic(data, limit)
    except (OSError, ValueError, KeyError) as error:
        raise fail(f"cannot read IMLogic data at {data}: {error}") from error
    memories = f"{dataset.counts['memories']} memories"
    with (
        ingested(store, dataset.sessions, memories, llm, base_url) as (context, answerer),
        progress_bar("imlogic", len(names) * len(dataset.questions)) as advance,
    ):
        results = run_imlogic(dataset, context, names, advance, answerer)
    publish(
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
    data: Annotated[
        Path,
        typer.Option(
            "--data",
            help="PrefEval's benchmark_dataset folder as published "
            "(github.com/amazon-science/PrefEval).",
        ),
    ],
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
    from ripplegraph.agent.eval import report
    from ripplegraph.agent.eval.prefeval import load_records, run_prefeval
    from ripplegraph.agent.eval.runs import bench_store, progress_bar, publish

    names = _systems(systems)
    counts = tuple(int(n) for n in fillers.split(","))
    with bench_store(store) as context:
        records = load_records(data, limit)
        with progress_bar("prefeval", len(records)) as advance:
            results = run_prefeval(data, context, names, records, counts, advance, workers)
    publish(
        "prefeval",
        results,
        report.prefeval_markdown(results),
        report.prefeval_chart,
        results_dir,
        out,
        charts,
    )
