"""A Chroma server or PostgreSQL that goes away and comes back: one clear line, nothing lost.

Each test runs servers of its own, kills them for real (SIGKILL for Chroma, an immediate
shutdown for PostgreSQL) in the middle of the work and starts them again on the same files.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ripplegraph.agent.context import Deployed, Deployment
from ripplegraph.agent.errors import PartUnavailable
from ripplegraph.agent.memory.ingest_files import load_sessions
from ripplegraph.agent.services import Services
from ripplegraph.agent.surfaces.api import remember
from ripplegraph.agent.surfaces.langgraph_store import RippleGraphStore
from tests import postgres_server
from tests.conftest import deployed, free_port, start_chroma, wait_for_http
from tests.integration.conftest import check_report
from tests.integration.test_crash_safety import UNITS, scalar, start_ingest, write_history

pytestmark = pytest.mark.integration
SESSIONS = range(16)
TOTAL = len(SESSIONS) * 6  # turns, one memory each


@pytest.fixture(scope="module")
def reference_ids(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """The ids one uninterrupted ingest of the history gives (the same on every backend)."""
    root = tmp_path_factory.mktemp("reference")
    reference = deployed(store_dir=str(root / "store"))
    remember(load_sessions(write_history(root / "history.json", SESSIONS)), "ana", reference)
    return {u.id for u in Services(reference.deployment).store().all_units("ana")}


class Chroma:
    """A ``chroma run`` of this test's own, on a fixed port and data folder."""

    def __init__(self, root: Path) -> None:
        self.root, self.port = root, free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        with (self.root / "chroma.log").open("ab") as log:
            self.process = start_chroma(self.root / "chroma", self.port, log)
        wait_for_http(f"{self.url}/api/v2/heartbeat", timeout=60, process=self.process)

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)


@pytest.fixture
def chroma(tmp_path: Path) -> Iterator[Chroma]:
    server = Chroma(tmp_path)
    yield server
    server.kill()


@pytest.fixture
def postgres() -> Iterator[tuple[Path, str]]:
    """A cluster of this test's own (its folder outside pytest's, for the postgres user)."""
    if postgres_server.binaries() is None:
        pytest.skip("no PostgreSQL server binaries (apt-get install postgresql)")
    directory = Path(tempfile.mkdtemp(prefix="ripplegraph-postgres-away-"))
    url = postgres_server.start(directory)
    try:
        yield directory, postgres_server.new_database(url)
    finally:
        postgres_server.stop(directory)
        shutil.rmtree(directory, ignore_errors=True)


def refused_in_one_line(log: Path, part: str) -> None:
    """The failed command said one ``error:`` line naming the part, and no traceback."""
    text = log.read_text()
    errors = [line for line in text.splitlines() if line.startswith("error:")]
    assert "Traceback" not in text, text[-3000:]
    assert len(errors) == 1, text[-3000:]
    assert part in errors[0] and "nothing stored was lost" in errors[0], errors[0]


def interrupted_then_rerun(
    context: Deployed, tmp_path: Path, stop: object, start: object, part: str
) -> set[str]:
    """Ingest, stop the part a third of the way, check the refusal, start it, ingest again."""
    Services(context.deployment).store()  # made here, so its collection threshold is this test's
    history = write_history(tmp_path / "history.json", SESSIONS)
    log = tmp_path / "ingest.log"
    process = start_ingest(context, history, "ana", log)
    deadline = time.monotonic() + 180
    while scalar(context, UNITS) < TOTAL // 3:
        assert process.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.01)
    stop()  # type: ignore[operator]
    assert process.wait(timeout=180) == 2, log.read_text()
    refused_in_one_line(log, part)
    start()  # type: ignore[operator]
    log.write_text("")
    assert start_ingest(context, history, "ana", log).wait(timeout=300) == 0, log.read_text()
    report = check_report(context)
    assert report["consistent"] and report["pending_links"] == {}, report
    assert not any(report["leftovers"].values()), report
    units = Services(context.deployment).store().all_units("ana")
    assert len({(u.provenance.session_id, *u.provenance.turn_ids) for u in units}) == TOTAL
    return {u.id for u in units}


def test_a_chroma_server_killed_mid_ingest(
    chroma: Chroma, tmp_path: Path, reference_ids: set[str]
) -> None:
    context = deployed(
        store_dir=str(tmp_path / "store"), chroma_url=chroma.url, collection_threshold=0
    )
    ids = interrupted_then_rerun(context, tmp_path, chroma.kill, chroma.start, "Chroma server")
    assert ids == reference_ids


def test_postgresql_stopped_mid_ingest(
    postgres: tuple[Path, str], tmp_path: Path, reference_ids: set[str]
) -> None:
    directory, url = postgres
    context = deployed(store_dir=str(tmp_path / "store"), database_url=url)
    ids = interrupted_then_rerun(
        context,
        tmp_path,
        lambda: postgres_server.halt(directory),
        lambda: postgres_server.resume(directory),
        "PostgreSQL database",
    )
    assert ids == reference_ids


def test_a_long_running_store_recovers_by_itself(
    chroma: Chroma, postgres: tuple[Path, str], tmp_path: Path
) -> None:
    """One ``RippleGraphStore`` through a PostgreSQL restart and a Chroma server restart."""
    directory, url = postgres
    deployment = Deployment(
        store_dir=str(tmp_path / "store"),
        chroma_url=chroma.url,
        database_url=url,
        collection_threshold=0,
    )
    store = RippleGraphStore(deployment=deployment)
    user = ("ana",)
    said = {
        "boat": "Ana bought a small red boat in Lisbon.",
        "piano": "Ana started piano lessons on Tuesdays.",
        "garden": "Ana planted tomatoes in the garden.",
    }

    def found(question: str) -> list[str]:
        return [item.key for item in store.search(user, query=question, limit=5)]

    store.put(user, "boat", {"text": said["boat"]})
    assert "boat" in found("What did Ana buy?")

    postgres_server.halt(directory)
    with pytest.raises(PartUnavailable, match="PostgreSQL database cannot be reached"):
        store.put(user, "piano", {"text": said["piano"]})
    with pytest.raises(PartUnavailable, match="PostgreSQL"):
        found("What did Ana buy?")
    postgres_server.resume(directory)
    store.put(user, "piano", {"text": said["piano"]})
    assert "piano" in found("When does Ana have piano lessons?")

    chroma.kill()
    with pytest.raises(PartUnavailable, match=re.escape(f"Chroma server at {chroma.url}")):
        store.put(user, "garden", {"text": said["garden"]})
    with pytest.raises(PartUnavailable, match="Chroma server"):
        found("What did Ana buy?")
    chroma.start()
    store.put(user, "garden", {"text": said["garden"]})
    assert "garden" in found("What did Ana plant?")

    assert sorted(item.key for item in store.search(user, limit=10)) == sorted(said)
    assert store.memory.count_units("ana") == 3
    report = store.memory.check()
    assert report.consistent and not any(report.leftovers.values()), report
