"""Forgetting down to the bytes, on every backend, by the rule the README states.

When ``forget`` returns, no read path returns a forgotten memory, and what still holds its
bytes (pages' free space, a collection's index files, Chroma's catalog, PostgreSQL's dead
rows) is owed to a compaction; once it has run (``ripplegraph compact``, or the store's own
within its erasure window) no file under the store, and none of the database's, holds its
text, id or vector.  A Chroma server's own files are its operator's; the write-ahead log of
PostgreSQL too.
"""

from __future__ import annotations

import contextlib
import os
import random
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest
from typer.testing import CliRunner

from ripplegraph.agent.cli import app
from ripplegraph.agent.context import Deployed
from ripplegraph.agent.graph import recall_graph
from ripplegraph.agent.memory import MemoryUnit, Session, Turn
from ripplegraph.agent.services import Services
from ripplegraph.agent.state import RecallInput, RecallOutput
from tests.conftest import deployed
from tests.integration.conftest import BACKENDS, backend_context, ingest, store_args
from tests.integration.test_soak import said
from tests.tenants import secret, tenant_sessions

pytestmark = pytest.mark.integration
QUESTIONS = ["What is Maya allergic to?", "What is the locker combination?", "Who is Tom?"]
SELECTORS: dict[str, Any] = {
    "memory-id": lambda units: {"memory_ids": [units[0].id, units[1].id]},
    "session": lambda units: {"session": "s2"},
    "person": lambda units: {"person": "Maya"},
    "all": lambda units: {"everything": True},
}


@pytest.fixture(params=BACKENDS)
def fresh_context(request: pytest.FixtureRequest, tmp_path: Path) -> Deployed:
    """An empty store on each backend (two of them keep every namespace in a collection)."""
    return backend_context(request, tmp_path / "store")


def store_bytes(context: Deployed) -> dict[Path, bytes]:
    """Every file under the store (databases, logs, index folders, locks), and the database's.

    The database server replaces some of its files as it runs (``pg_internal.init``); one
    gone between listing and reading held nothing to find.
    """
    held: dict[Path, bytes] = {}
    for path in Services(context.deployment).store().files():
        with contextlib.suppress(FileNotFoundError):
            held[path] = path.read_bytes()
    return held


def found(files: dict[Path, bytes], needles: list[bytes]) -> list[str]:
    return [f"{p.name}: {n[:40]!r}" for p, data in files.items() for n in needles if n in data]


def cli(context: Deployed, *args: str) -> str:
    result = CliRunner().invoke(app, [*args, *store_args(context)])
    assert result.exit_code == 0, result.output
    return result.stdout


def needles(context: Deployed, units: list[MemoryUnit], vectors: dict[str, Any]) -> list[bytes]:
    """What must leave the files: texts and ids, and the vectors Chroma or the rows held here."""
    wanted = [*(u.text.encode() for u in units), *(u.id.encode() for u in units)]
    if not context.deployment.chroma_url or Services(context.deployment).store().vectors.threshold:
        wanted += [vectors[u.id].astype(np.float32).tobytes() for u in units]
    return wanted


@pytest.mark.parametrize("selector", SELECTORS)
def test_forget_leaves_no_bytes_behind(fresh_context: Deployed, selector: str) -> None:
    store = Services(fresh_context.deployment).store()
    ingest(fresh_context, "alice", tenant_sessions(0))
    ingest(fresh_context, "bob", tenant_sessions(1))
    units = store.all_units("alice")
    vectors = store.embeddings("alice", [u.id for u in units])
    for question in QUESTIONS:  # checkpointed threads that quote alice's memories
        cli(fresh_context, "ask", question, "-n", "alice")
    cli(fresh_context, "ask", "What is Maya allergic to?", "-n", "bob")
    in_rows = store.vectors.placement("alice") == "rows"
    if fresh_context.deployment.database_url:  # statistics sample ids and texts, as autovacuum's
        with psycopg.connect(fresh_context.deployment.database_url, autocommit=True) as db:
            db.execute("ANALYZE")

    gone = set(store.forget("alice", **SELECTORS[selector](units)))

    kept = {u.text for namespace in ("alice", "bob") for u in store.all_units(namespace)}
    forgotten = [u for u in units if u.id in gone and u.text not in kept]  # bob says some too
    assert forgotten and store.count_units("alice") == len(units) - len(gone)
    for unit in forgotten:  # gone from every read path at once
        assert unit.id not in {m for m, _ in store.search_semantic("alice", unit.text, 50)}
        assert store.get("alice", [unit.id]) == {}
    assert "relational" in store.debts(), "the rest is owed to the compaction"

    cli(fresh_context, "compact")

    assert store.debts() == {}
    assert found(store_bytes(fresh_context), needles(fresh_context, forgotten, vectors)) == []
    if selector == "all" and not in_rows and not fresh_context.deployment.chroma_url:
        folders = [p for p in (Path(fresh_context.deployment.store_dir) / "chroma").iterdir()]
        assert len([p for p in folders if p.is_dir()]) <= 1, "alice's index folder is deleted"
    for unit in [u for u in units if u.id not in gone]:
        raw = recall_graph.invoke(
            RecallInput(query=unit.text, namespace="alice"), context=fresh_context
        )
        assert unit.id in {e.memory.id for e in RecallOutput.model_validate(raw).evidence}
    raw = recall_graph.invoke(RecallInput(query=secret(1), namespace="bob"), context=fresh_context)
    assert secret(1) in RecallOutput.model_validate(raw).context
    report = store.check()
    assert report.consistent and not any(report.leftovers.values()), report


def test_the_byte_check_sees_what_a_store_holds(fresh_context: Deployed) -> None:
    """The check above can fail: before a forget, the texts are there to be found."""
    ingest(fresh_context, "alice", tenant_sessions(0))
    cli(fresh_context, "ask", "What is Maya allergic to?", "-n", "alice")
    store = Services(fresh_context.deployment).store()
    units = store.all_units("alice")
    files = store_bytes(fresh_context)
    tables = {p: d for p, d in files.items() if p.name != "checkpoints.sqlite"}
    assert found(tables, [u.text.encode() for u in units]), "graph.sqlite or the database's"
    vectors = store.embeddings("alice", [u.id for u in units])
    held = needles(fresh_context, units, vectors)[2 * len(units) :]
    if held:  # the vectors: in rows, or in an embedded collection's log and index
        assert found(files, held)
    checkpoints = {p: d for p, d in files.items() if p.name == "checkpoints.sqlite"}
    assert found(checkpoints, [u.id.encode() for u in units]), "threads quote the evidence"


def test_a_running_store_closes_its_erasure_window_by_itself(tmp_path: Path) -> None:
    """No compact command: the store's own timer compacts once the window has passed."""
    context = deployed(
        store_dir=str(tmp_path / "store"), collection_threshold=0, erasure_window_minutes=0.02
    )
    store = Services(context.deployment).store()
    ingest(context, "alice", tenant_sessions(0))
    victim = store.all_units("alice")[2]
    vector = store.embeddings("alice", [victim.id])
    store.forget("alice", memory_ids=[victim.id])
    assert store.debts()
    deadline = time.monotonic() + 30
    while store.debts() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert store.debts() == {}
    assert found(store_bytes(context), needles(context, [victim], vector)) == []


def test_index_files_hold_nothing_past_their_live_elements(tmp_path: Path) -> None:
    """Chroma writes its HNSW buffers unzeroed (chroma#7688); the store zeroes the slack."""
    context = deployed(store_dir=str(tmp_path / "store"), collection_threshold=0)
    store = Services(context.deployment).store()
    ingest(context, "alice", tenant_sessions(0))
    chroma = store.vectors.chroma
    unit = store.all_units("alice")[0]
    vector = store.embeddings("alice", [unit.id])[unit.id][None]
    chroma.flush("alice")  # the index is saved: its files exist
    folders = chroma._segment_folders("alice")
    assert folders
    marker = b"freed heap: vault0code23757"
    for folder in folders:  # a save that wrote what an unlucky allocation left in the slack
        for name in ("data_level0.bin", "length.bin"):
            with (folder / name).open("r+b") as file:
                file.seek(-len(marker), 2)
                file.write(marker)
        os.utime(folder / "header.bin", ns=(time.time_ns(), time.time_ns() + 1000))
    assert found(store_bytes(context), [marker])
    store.vectors.upsert("alice", [unit.id], vector)  # the next write sees the new save
    assert found(store_bytes(context), [marker]) == []
    assert unit.id in {m for m, _ in store.search_semantic("alice", unit.text, 3)}


def test_a_compaction_removes_what_page_balancing_left(tmp_path: Path) -> None:
    """SQLite's b-tree balancing copies cells; the bytes they left outlive ``secure_delete``.

    Ten namespaces of 300 memories, 60 forgotten in each: right after the forgets a few
    forgotten ids are still in ``graph.sqlite``'s free space (the check can fail), and none
    after the compaction (its ``VACUUM``).
    """
    context = deployed(store_dir=str(tmp_path / "store"))
    store = Services(context.deployment).store()
    sessions = [
        Session(
            id=f"s{day}",
            date=datetime(2024, 3, 1 + day),
            turns=[Turn(speaker="Ana", text=said(30 * day + i), id=f"t{i}") for i in range(30)],
        )
        for day in range(10)
    ]
    ingest(context, "base", sessions)
    gone: list[bytes] = []
    rng = random.Random(0)
    for user in range(10):
        store.clone_namespace("base", f"u{user}")
        chosen = rng.sample(store.all_units(f"u{user}"), 60)
        gone += [u.id.encode() for u in chosen]
        store.forget(f"u{user}", memory_ids=[u.id for u in chosen])
    database = tmp_path / "store" / "graph.sqlite"
    assert [m for m in gone if m in database.read_bytes()], "balancing left copies"
    store.compact()
    assert [m for m in gone if m in database.read_bytes()] == []
