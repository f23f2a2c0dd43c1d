"""Forgetting down to the bytes, on embedded Chroma and on a Chroma server.

After each kind of forget, no file under the store holds a forgotten memory's text, vector or
id, and what was not forgotten is still recalled.  With the relational side on PostgreSQL the
rows live in the server's files, where a client's guarantee ends at ``VACUUM FULL`` and a
checkpoint (the README says what the operator must do), so these run on SQLite.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ripplegraph.agent.cli import app
from ripplegraph.agent.context import Deployed
from ripplegraph.agent.graph import recall_graph
from ripplegraph.agent.state import RecallInput, RecallOutput
from tests.conftest import deployed
from tests.integration.conftest import backend_context, ingest
from tests.tenants import secret, tenant_sessions

pytestmark = pytest.mark.integration
QUESTIONS = ["What is Maya allergic to?", "What is the locker combination?", "Who is Tom?"]
SELECTORS = {
    "memory-id": lambda units: ["--memory-id", units[0].id, "--memory-id", units[1].id],
    "session": lambda units: ["--session", "s2"],
    "person": lambda units: ["--person", "Maya"],
    "all": lambda units: ["--all"],
}


@pytest.fixture(params=["embedded", "chroma-server"])
def fresh_context(request: pytest.FixtureRequest, tmp_path: Path) -> Deployed:
    """An empty store with its relational side in ``graph.sqlite``."""
    return backend_context(request, tmp_path / "store")


def store_bytes(store: Path) -> dict[Path, bytes]:
    """Every file under the store, read whole (databases, logs, index folders, locks)."""
    return {path: path.read_bytes() for path in sorted(store.rglob("*")) if path.is_file()}


def found(files: dict[Path, bytes], needles: list[bytes]) -> list[str]:
    return [f"{p.name}: {n[:40]!r}" for p, data in files.items() for n in needles if n in data]


def cli(context: Deployed, *args: str) -> str:
    server = context.deployment.chroma_url
    where = ["--store", context.deployment.store_dir, *(["--chroma-url", server] if server else [])]
    result = CliRunner().invoke(app, [*args, *where])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("selector", SELECTORS)
def test_forget_leaves_no_bytes_behind(fresh_context: Deployed, selector: str) -> None:
    store = fresh_context.store()
    ingest(fresh_context, "alice", tenant_sessions(0))
    ingest(fresh_context, "bob", tenant_sessions(1))
    units = store.all_units("alice")
    vectors = store.embeddings("alice", [u.id for u in units])
    for question in QUESTIONS:  # checkpointed threads that quote alice's memories
        cli(fresh_context, "ask", question, "-n", "alice")
    cli(fresh_context, "ask", "What is Maya allergic to?", "-n", "bob")
    root = Path(fresh_context.deployment.store_dir)

    result = json.loads(
        cli(fresh_context, "forget", "-n", "alice", *SELECTORS[selector](units), "--json")
    )

    gone = set(result["forgotten"])
    kept = {u.text for namespace in ("alice", "bob") for u in store.all_units(namespace)}
    forgotten = [u for u in units if u.id in gone and u.text not in kept]  # bob says some too
    assert forgotten and result["remaining"] == len(units) - len(gone)
    texts = [u.text.encode() for u in forgotten]
    needles = [*texts, *(u.id.encode() for u in forgotten)]
    if not fresh_context.deployment.chroma_url:  # a server's files are its operator's
        needles += [vectors[u.id].astype(np.float32).tobytes() for u in forgotten]
    assert found(store_bytes(root), needles) == []
    if selector == "all":
        assert store.vectors.namespaces() == ["bob"]
        folders = (
            [p for p in (root / "chroma").iterdir() if p.is_dir()]
            if not fresh_context.deployment.chroma_url
            else []
        )
        assert len(folders) <= 1, "the dropped collection's index folder is deleted"
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
    store = fresh_context.store()
    units = store.all_units("alice")
    files = store_bytes(Path(fresh_context.deployment.store_dir))
    assert found(files, [u.text.encode() for u in units])
    if not fresh_context.deployment.chroma_url:
        vectors = store.embeddings("alice", [u.id for u in units]).values()
        assert found(files, [v.astype(np.float32).tobytes() for v in vectors])
    checkpoints = {p: d for p, d in files.items() if p.name == "checkpoints.sqlite"}
    assert found(checkpoints, [u.id.encode() for u in units]), "threads quote the evidence"


def test_index_files_hold_nothing_past_their_live_elements(tmp_path: Path) -> None:
    """Chroma writes its HNSW buffers unzeroed (chroma#7688); the store zeroes the slack."""
    context = deployed(store_dir=str(tmp_path / "store"))
    store = context.store()
    ingest(context, "alice", tenant_sessions(0))
    folders = store.vectors._segment_folders("alice")
    assert folders
    marker = b"freed heap: vault0code23757"
    for folder in folders:  # what an unlucky allocation leaves in the unused slots
        for name in ("data_level0.bin", "length.bin"):
            with (folder / name).open("r+b") as file:
                file.seek(-len(marker), 2)
                file.write(marker)
    unit = store.all_units("alice")[0]
    store.vectors.upsert("alice", [unit.id], store.embeddings("alice", [unit.id])[unit.id][None])
    assert found(store_bytes(tmp_path / "store"), [marker]) == []
    assert unit.id in {m for m, _ in store.search_semantic("alice", unit.text, 3)}
