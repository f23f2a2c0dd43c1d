"""Crash safety and concurrent writers: real `ripplegraph ingest` processes, killed or racing."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from ripplegraph.agent.context import Deployed
from ripplegraph.agent.memory.ingest_files import load_sessions
from ripplegraph.agent.services import Services
from ripplegraph.agent.surfaces.api import remember
from tests.conftest import deployed
from tests.integration.conftest import BACKENDS, backend_context, check_report, store_args

pytestmark = pytest.mark.integration
_TOPICS = ["climbing", "the garden", "a job interview", "the band", "a trip to Rome", "taxes"]


def write_history(path: Path, sessions: range) -> Path:
    """A documented-format file: six distinct turns per session, one session per day."""
    start = datetime(2024, 1, 1, 18, 0)
    payload = {
        "sessions": [
            {
                "id": f"s{n}",
                "date": (start + timedelta(days=n)).isoformat(),
                "turns": [
                    {
                        "speaker": "Ana" if i % 2 == 0 else "Ben",
                        "text": f"Day {n}, note {i}: we talked about {_TOPICS[(n + i) % 6]} "
                        f"and item {n * 10 + i} with Carla in Lisbon.",
                        "id": f"s{n}t{i}",
                    }
                    for i in range(6)
                ],
            }
            for n in sessions
        ]
    }
    path.write_text(json.dumps(payload))
    return path


def start_ingest(
    context: Deployed, file: Path, namespace: str, log: Path
) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "ripplegraph.agent.cli", "ingest", str(file), "-n", namespace]
    command += [*store_args(context), "--json"]
    with log.open("ab") as output:
        return subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=os.environ)


def scalar(context: Deployed, sql: str) -> int:
    """One count from the store's relational side, read as another process would.

    -1 while the schema is not there yet.
    """
    url = context.deployment.database_url
    if url:
        try:
            with psycopg.connect(url, connect_timeout=2) as db:
                row = db.execute(sql).fetchone()
                return int(row[0]) if row else -1
        except psycopg.Error:
            return -1
    database = Path(context.deployment.store_dir) / "graph.sqlite"
    if not database.exists():
        return -1
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=1) as db:
            return int(db.execute(sql).fetchone()[0])
    except sqlite3.Error:  # the schema is not there yet
        return -1


Condition = Callable[[Deployed], bool]
UNITS = "SELECT COUNT(*) FROM units"
PENDING = "SELECT COUNT(*) FROM pending_links"
TOTAL = 40 * 6
KILL_POINTS: dict[str, Condition] = {
    "store created, nothing written": lambda db: scalar(db, "SELECT COUNT(*) FROM meta") >= 3,
    "units committed, links pending": lambda db: scalar(db, PENDING) > 0,
    "a third written": lambda db: scalar(db, UNITS) >= TOTAL // 3,
    "two thirds written, links pending": lambda db: (
        scalar(db, UNITS) >= 2 * TOTAL // 3 and scalar(db, PENDING) > 0
    ),
}


def kill_when(process: subprocess.Popen[bytes], context: Deployed, condition: Condition) -> None:
    deadline = time.monotonic() + 180
    while not condition(context):
        assert process.poll() is None, "the ingest ended before the kill point"
        assert time.monotonic() < deadline, "kill point never reached"
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)


@pytest.fixture(params=[b for b in BACKENDS if b != "chroma-server"])
def crash_context(request: pytest.FixtureRequest, tmp_path: Path) -> Deployed:
    """Each writer lock (SQLite's file, PostgreSQL's advisory lock) with each kind of Chroma.

    SQLite with a Chroma server adds no path of its own here (its lock is embedded SQLite's,
    its vectors the server's), and each case costs a minute of process starts.
    """
    return backend_context(request, tmp_path / "store")


@pytest.fixture(scope="module")
def reference_ids(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """The ids one uninterrupted ingest of the history gives (the same on every backend)."""
    root = tmp_path_factory.mktemp("reference")
    history = write_history(root / "history.json", range(40))
    reference = deployed(store_dir=str(root / "store"))
    remember(load_sessions(history), "ana", reference)
    return {u.id for u in Services(reference.deployment).store().all_units("ana")}


def test_sigkill_at_any_point_then_rerun_completes_without_duplicates(
    crash_context: Deployed, tmp_path: Path, reference_ids: set[str]
) -> None:
    history = write_history(tmp_path / "history.json", range(40))
    log = tmp_path / "ingest.log"
    for point, condition in KILL_POINTS.items():
        process = start_ingest(crash_context, history, "ana", log)
        kill_when(process, crash_context, condition)
        report = check_report(crash_context)
        assert report["consistent"], (point, report)

    rerun = start_ingest(crash_context, history, "ana", log)
    assert rerun.wait(timeout=300) == 0, log.read_text()
    store = Services(crash_context.deployment).store()
    units = store.all_units("ana")
    assert len(units) == TOTAL
    assert len({(u.provenance.session_id, *u.provenance.turn_ids) for u in units}) == TOTAL
    report = check_report(crash_context)
    assert report["consistent"] and report["pending_links"] == {}, report
    assert not any(report["leftovers"].values()), report
    assert {u.id for u in units} == reference_ids
    assert store.count_edges("ana")["semantic"] > 0


def test_two_writers_on_one_store_both_succeed(crash_context: Deployed, tmp_path: Path) -> None:
    context = crash_context
    first = write_history(tmp_path / "first.json", range(0, 24))
    second = write_history(tmp_path / "second.json", range(12, 36))
    log = tmp_path / "writers.log"
    writers = [
        start_ingest(context, first, "ana", log),
        start_ingest(context, second, "ana", log),
        start_ingest(context, first, "ben", log),
    ]
    assert [w.wait(timeout=400) for w in writers] == [0, 0, 0], log.read_text()
    store = Services(context.deployment).store()
    assert store.count_units("ana") == 36 * 6
    assert store.count_units("ben") == 24 * 6
    report = check_report(context)
    assert report["consistent"] and report["pending_links"] == {}, report
    assert not any(report["leftovers"].values())  # type: ignore[attr-defined]
