"""One memory, several processes: what one process writes, another's recall finds at once.

On servers only: embedded Chroma's client does not see another process's writes safely (the
write lock makes embedded writers wait for each other, not readers for writers).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ripplegraph import RippleGraphStore
from ripplegraph.agent.context import Deployed
from ripplegraph.agent.decisions.linking import LinkingConfig
from ripplegraph.agent.surfaces.api import recall
from tests.integration.conftest import backend_context, ingest, store_args
from tests.tenants import tenant_sessions

pytestmark = pytest.mark.integration
KAYAK = "Ana keeps a zebra-striped kayak called Brindle at the Ouse boathouse."


@pytest.fixture(params=["chroma-server", "postgres+chroma-server"])
def shared(request: pytest.FixtureRequest, tmp_path: Path) -> Deployed:
    return backend_context(request, tmp_path / "store")


def test_a_write_by_another_process_reaches_this_processs_recall(
    shared: Deployed, tmp_path: Path
) -> None:
    """The derived indexes here (BM25, cue index, caches) follow the other process's write."""
    ingest(shared, "ana", tenant_sessions(0))
    before = recall("Where does Ana keep the kayak Brindle?", "ana", shared)
    assert not any("Brindle" in e.memory.text for e in before.evidence)
    history = tmp_path / "kayak.json"
    turn = {"speaker": "Ana", "text": KAYAK, "id": "k1"}
    history.write_text(json.dumps({"sessions": [{"id": "k", "turns": [turn]}]}))
    command = [
        sys.executable,
        "-m",
        "ripplegraph.agent.cli",
        "ingest",
        str(history),
        "-n",
        "ana",
        "--json",
    ]
    done = subprocess.run(
        [*command, *store_args(shared)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    after = recall("Where does Ana keep the kayak Brindle?", "ana", shared)
    found = [e for e in after.evidence if "Brindle" in e.memory.text]
    assert found, "the other process's memory is recalled"
    assert {s.channel for s in found[0].sources} & {"lexical", "semantic", "cue"}


WRITER = """
import sys
from ripplegraph import RippleGraphStore

store = RippleGraphStore()  # the deployment the environment names, as a server's would be
writer = sys.argv[1]
for i in range(int(sys.argv[2])):
    text = f"Ana logged a {7 + i} km run, entry q{writer}{i}z in writer {writer}'s log."
    store.put(("team", "ana"), f"{writer}-{i}", {"text": text, "speaker": "Ana"})
"""


@pytest.mark.parametrize("shared", ["postgres+chroma-server"], indirect=True)
def test_many_basestore_writers_and_a_cli_ingest_share_one_namespace(
    shared: Deployed, tmp_path: Path
) -> None:
    """Two processes put through RippleGraphStore while the CLI ingests: none lost or twice.

    On PostgreSQL and a Chroma server, the deployment this is for (SQLite with a Chroma
    server runs the CLI writers in ``test_crash_safety``).

    This process reads first, so its derived indexes exist before the others write: its recall
    afterwards shows they followed the writes.
    """
    deployment = shared.deployment
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "RIPPLEGRAPH_STORE": deployment.store_dir,
        "RIPPLEGRAPH_CHROMA_URL": deployment.chroma_url or "",
        "RIPPLEGRAPH_DATABASE_URL": deployment.database_url or "",
    }
    store = RippleGraphStore(deployment=deployment)
    store.put(("team", "ana"), "first", {"text": "Ana joined the rowing club.", "speaker": "Ana"})
    assert store.search(("team", "ana"), query="rowing")[0].key == "first"
    history = tmp_path / "kayak.json"
    turn = {"speaker": "Ana", "text": KAYAK, "id": "k1"}
    history.write_text(json.dumps({"sessions": [{"id": "k", "turns": [turn]}]}))
    log = (tmp_path / "writers.log").open("w")
    ingest_cli = [sys.executable, "-m", "ripplegraph.agent.cli", "ingest", str(history)]
    processes = [
        subprocess.Popen([sys.executable, "-c", WRITER, name, "4"], env=env, stdout=log, stderr=log)
        for name in ("a", "b")
    ] + [
        subprocess.Popen(
            [*ingest_cli, "-n", "team/ana", *store_args(shared)], env=env, stdout=log, stderr=log
        )
    ]
    codes = [p.wait(timeout=600) for p in processes]
    assert codes == [0, 0, 0], (tmp_path / "writers.log").read_text()

    keys = {f"{w}-{i}" for w in "ab" for i in range(4)} | {"first"}
    items = {item.key: item for item in store.search(("team", "ana"), limit=100)}
    assert keys <= set(items) and len(items) == len(keys) + 1  # + the ingested turn
    memory = store.memory
    assert memory.count_units("team/ana") == len(keys) + 1, "every write once, none lost"
    degrees = memory.degrees(memory.unit_ids("team/ana"), "semantic")
    assert max(degrees.values(), default=0) <= LinkingConfig.max_edges_per_channel
    assert memory.check().consistent
    hits = store.search(("team", "ana"), query="Where is the kayak Brindle kept?", limit=3)
    assert any("Brindle" in hit.value["recall"]["memory"] for hit in hits)
    for key in ("a-3", "b-3"):  # each written elsewhere, found here by its own word
        hits = store.search(("team", "ana"), query=f"Which run is entry q{key[0]}3z?", limit=3)
        assert key in {hit.key for hit in hits}
