"""A put is whole or absent whatever kills its process (``tests/put_loop.py`` is the writer).

A put killed at each of its steps, then a loop of puts, replacements and deletes killed at
random moments, dozens of times, on the embedded layout and on the served one (PostgreSQL and
a Chroma server, every namespace in a collection).  After each crash the next process opens
the store and finishes what was logged; in the end every acknowledged write is there, every
acknowledged delete gone, no memory is left without its item, and ``check`` is consistent.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ripplegraph import RippleGraphStore
from ripplegraph.agent.context import Deployed
from ripplegraph.agent.memory.items import namespace_of
from tests.integration.conftest import backend_context
from tests.put_loop import NAMESPACE, STEPS, note, value

pytestmark = pytest.mark.integration
KILLS = int(os.environ.get("RIPPLEGRAPH_TEST_KILLS", "12"))
"""Random kills per layout: a dozen each in the suite (two dozen in all); more by hand."""


def writer_args(context: Deployed) -> list[str]:
    deployment = context.deployment
    return [deployment.store_dir, deployment.chroma_url or "", deployment.database_url or ""]


def half_written(store: RippleGraphStore, keys: set[str]) -> dict[str, list[str]]:
    """Memories made of a put (a turn ``<n>:<key>``) that its item does not hold."""
    namespace = namespace_of(NAMESPACE)
    held = {mid for item in store.memory.items(namespace) for mid in item.unit_ids}
    stray: dict[str, list[str]] = {}
    for unit in store.memory.all_units(namespace):
        for turn in unit.provenance.turn_ids:
            key = turn.partition(":")[2]
            if key in keys and unit.id not in held:
                stray.setdefault(key, []).append(unit.id)
    return stray


@pytest.fixture(params=["embedded", "postgres+chroma-server"])
def layout(request: pytest.FixtureRequest, tmp_path: Path) -> Deployed:
    """Embedded (SQLite, Chroma's files, vectors in rows), or served past the threshold."""
    served = request.param != "embedded"
    return backend_context(
        request, tmp_path / "store", **({"collection_threshold": 0} if served else {})
    )


def test_a_put_killed_at_each_step_is_whole_or_absent(layout: Deployed, tmp_path: Path) -> None:
    """A new key on the embedded layout, a replaced item on the served one."""
    replacing = layout.deployment.database_url is not None
    store = RippleGraphStore(context=layout)
    store.memory.check()  # the store exists, its layout chosen, before any writer runs
    for number, name in enumerate(STEPS):
        key = f"step-{number}"
        old, new = note(number), note(number, 1)
        if replacing:
            store.put(NAMESPACE, key, value(old))
        command = [sys.executable, "-m", "tests.put_loop", "step", name, key, new]
        done = subprocess.run(
            command + writer_args(layout), capture_output=True, text=True, timeout=300
        )
        assert done.returncode == -signal.SIGKILL, (name, done.stdout, done.stderr[-2000:])

        reopened = RippleGraphStore(context=layout)  # finishes a put that was logged
        item = reopened.get(NAMESPACE, key)
        logged = name != "before the put is logged"
        expected = value(new) if logged else (value(old) if replacing else None)
        assert (item.value if item else None) == expected, name
        assert half_written(reopened, {key}) == {}, name
        if expected is not None:
            found = reopened.search(NAMESPACE, query=f"the locker code for shelf {number}")
            assert any(hit.key == key for hit in found), name
        assert reopened.memory.check().consistent, name
        reopened.delete(NAMESPACE, key)
        assert half_written(reopened, {key}) == {} and reopened.get(NAMESPACE, key) is None


@dataclass
class Ledger:
    """What the writer said: the state of each key it acknowledged, and what was under way."""

    state: dict[str, str | None] = field(default_factory=dict)  # key -> text, None: deleted
    pending: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)

    def read(self, lines: list[str]) -> None:
        """Fold one killed run's output in (a half-written last line is ignored)."""
        under_way: tuple[str, str | None] | None = None
        for line in lines:
            said, operation, key, *text = line.rstrip("\n").split(" ", 3)
            after = " ".join(text) if operation == "put" else None
            if said == "begin":
                under_way = (key, after)
            elif said == "done":
                self.state[key] = after
                under_way = None
        if under_way is not None:
            key, after = under_way
            self.pending[key] = (self.state.get(key), after)


def test_a_writer_killed_dozens_of_times_loses_and_half_writes_nothing(
    layout: Deployed, tmp_path: Path
) -> None:
    rng = random.Random(47)
    RippleGraphStore(context=layout).memory.check()
    ledger = Ledger()
    acknowledged = 0
    for run in range(KILLS):
        log = tmp_path / f"run-{run}.log"
        with log.open("w") as out:
            writer = subprocess.Popen(
                [sys.executable, "-m", "tests.put_loop", "loop", f"r{run}", *writer_args(layout)],
                stdout=out,
                stderr=subprocess.DEVNULL,
                env=os.environ,
            )
            deadline = time.monotonic() + 180
            while "done" not in log.read_text():  # killed once it is writing
                assert writer.poll() is None, f"the writer died by itself (run {run})"
                assert time.monotonic() < deadline, "the writer never acknowledged a write"
                time.sleep(0.05)
            time.sleep(rng.uniform(0.0, 2.5))
            writer.send_signal(signal.SIGKILL)
            writer.wait(timeout=30)
        lines = log.read_text().splitlines(keepends=True)
        lines = [line for line in lines if line.endswith("\n")]
        acknowledged += sum(line.startswith("done") for line in lines)
        ledger.read(lines)

    store = RippleGraphStore(context=layout)
    assert acknowledged > KILLS, "the writer acknowledged writes between kills"
    keys = set(ledger.state) | set(ledger.pending)
    for key in keys:
        item = store.get(NAMESPACE, key)
        got = item.value["text"] if item else None
        allowed = set(ledger.pending[key]) if key in ledger.pending else {ledger.state[key]}
        assert got in allowed, (key, got, allowed)
    assert half_written(store, keys) == {}
    assert store.memory.check().consistent
    assert store.memory.unfinished_puts() == []
