"""What every benchmark run shares: its store, its progress bar, where its files go.

A bench measures the retrieval systems with the offline policies whatever the environment
names, in a store of its own (a temporary one unless ``--store`` names it), and writes its
results only where it was told to.
"""

from __future__ import annotations

import os
import platform
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markdown import Markdown
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ripplegraph.agent.context import Deployed, Deployment, ModelSettings
from ripplegraph.agent.eval import report
from ripplegraph.agent.memory import Session
from ripplegraph.agent.models.llm import RoleCaller
from ripplegraph.agent.services import Services

console = Console()
errors = Console(stderr=True)

_OFFLINE = ModelSettings(model=None, base_url=None)
"""A bench's systems recall offline, whatever the environment names."""

RANKING_LIBRARIES = (
    "chromadb",
    "dateparser",
    "lightgbm",
    "numpy",
    "onnxruntime",
    "rank-bm25",
    "scikit-learn",
    "scipy",
    "tokenizers",
)
"""The libraries a ranking's last bits depend on (``constraints.txt`` pins them)."""


def environment() -> dict[str, Any]:
    """What a run's numbers depend on beyond the code: the machine and the library versions.

    Another numpy or ONNX Runtime can move a score's last bit, and a near tie with it; latency
    is the machine's. Each results file says which it was measured with.
    """

    def installed(name: str) -> str | None:
        try:
            return version(name)
        except PackageNotFoundError:
            return None

    return {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "processor": _processor(),
        "cpus": os.cpu_count(),
        "libraries": {name: installed(name) for name in RANKING_LIBRARIES},
    }


def _processor() -> str:
    """The CPU's model name where Linux says it (``platform.processor()`` is often empty)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor()


@contextmanager
def bench_store(
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
def progress_bar(label: str, total: int) -> Iterator[Callable[[], None]]:
    """A progress bar on stderr; yields the call that advances it by one."""
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


def publish(
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
    The JSON also records the run's ``environment``.
    """
    if results_dir is None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        results_dir = out.parent if out is not None else Path(f"bench-{name}-{stamp}")
    results_dir.mkdir(parents=True, exist_ok=True)
    summary = {k: v for k, v in results.items() if k != "details"} | {"environment": environment()}
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
def ingested(
    store: Path | None,
    sessions: Mapping[str, Sequence[Session]],
    what: str,
    llm: str | None,
    base_url: str | None,
) -> Iterator[tuple[Deployed, RoleCaller | None]]:
    """The bench store with every namespace ingested, and the ``--llm`` answerer if any."""
    from ripplegraph.agent.eval.systems import ingest_namespaces

    with bench_store(store) as context:
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
