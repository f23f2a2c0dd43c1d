"""One memory, several processes: what one process writes, another's recall finds at once.

On servers only: embedded Chroma's client does not see another process's writes safely (the
write lock makes embedded writers wait for each other, not readers for writers).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ripplegraph.agent.api import recall
from ripplegraph.agent.context import Deployed
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
