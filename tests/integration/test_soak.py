"""Endurance in the suite: memory under a churn of deletes, and what one delete costs by size.

The long soak (many users, a mixed load, half an hour) is ``ripplegraph bench soak``; these
are its two failure modes in two minutes, through the public ``Memory`` client.  Before the
fix, every forget rebuilt the namespace's Chroma collection: resident memory grew about 3 MB
a delete (Chroma keeps every index it loaded, dropped ones included) and a delete cost what
the namespace held.
"""

from __future__ import annotations

import statistics
import time
from datetime import datetime
from pathlib import Path

import pytest

from ripplegraph import Memory
from ripplegraph.agent.context import Deployment
from ripplegraph.agent.eval.scale import resident_mb
from ripplegraph.agent.memory import Session, Turn
from tests.integration.conftest import ingest

pytestmark = pytest.mark.integration
RSS_MB_PER_1000_DELETES = 25.0
"""Most resident growth allowed over 1,000 deletes after warm-up (allocator noise included)."""
DELETE_GROWTH = 2.0
"""Most a delete's median may grow from a namespace of 500 units to one of 5,000."""
_PLACES = ["Lisbon", "Oslo", "Kyoto", "Quito", "Accra", "Hanoi", "Perth", "Cusco"]
_THINGS = ["a kettle", "a bike", "a lamp", "boots", "a tent", "a drum", "a map", "a scarf"]


def said(index: int) -> str:
    """A distinct sentence for each index (every add is a new memory)."""
    place, thing = _PLACES[index % 8], _THINGS[(index // 8) % 8]
    return f"On trip {index} to {place} I bought {thing} and paid {index % 97 + 3} euros."


def test_resident_memory_stays_flat_under_a_churn_of_deletes(tmp_path: Path) -> None:
    """A user of the default deployment: add ten, search, delete ten, sixty times.

    The erasure window is seconds long, so the background compaction runs during the churn;
    after the last one, no forgotten memory's id is in any file (page balancing under such a
    churn leaves copies in free space that only the compaction removes).
    (A namespace with a collection of its own is soaked by ``ripplegraph bench soak
    --collection-threshold 0``; Chroma's memory under churn is in the README.)
    """
    deployment = Deployment(store_dir=str(tmp_path / "store"), erasure_window_minutes=0.05)
    memory = Memory(deployment=deployment)
    store = memory.store.memory
    for index in range(200):
        memory.add(said(index), user_id="soak")
    counter = iter(range(1000, 10**6))
    forgotten: list[bytes] = []

    def churn(rounds: int) -> None:
        for _ in range(rounds):
            keys = [memory.add(said(next(counter)), user_id="soak") for _ in range(10)]
            assert memory.search("What did I buy in Lisbon?", user_id="soak").results
            for key in keys:
                forgotten.extend(m.encode() for m in store.items("soak", [key])[0].unit_ids)
                memory.delete(key, user_id="soak")

    churn(10)  # warm-up: 100 deletes, caches and allocator pools filled
    before = resident_mb()
    churn(50)  # 500 deletes
    grown = resident_mb() - before
    bound = RSS_MB_PER_1000_DELETES / 2
    assert grown <= bound, f"RSS grew {grown:.1f} MB over 500 deletes (bound {bound} MB)"
    store.compact()
    assert store.count_units("soak") == 200
    report = store.check()
    assert report.consistent and not any(report.leftovers.values()), report
    files = [p.read_bytes() for p in (tmp_path / "store").rglob("*") if p.is_file()]
    left = [m for m in forgotten if any(m in data for data in files)]
    assert left == [], f"{len(left)} of {len(forgotten)} forgotten ids are still in a file"


@pytest.mark.parametrize("threshold", [0, 10_000], ids=["collections", "rows"])
def test_a_delete_costs_the_same_at_5000_units_as_at_500(tmp_path: Path, threshold: int) -> None:
    """Median ``Memory.delete`` of one added memory at 500 and at 5,000 units, each layout."""
    deployment = Deployment(store_dir=str(tmp_path / "store"), collection_threshold=threshold)
    memory = Memory(deployment=deployment)
    store = memory.store.memory
    start = Session(
        id="trips",
        date=datetime(2024, 3, 1, 10),
        turns=[Turn(speaker="Ana", text=said(i), id=f"t{i}") for i in range(500)],
    )
    ingest(deployment.bind(), "small", [start])
    store.clone_namespace("small", "large")
    base = [u.id for u in store.all_units("large")]
    while (count := store.count_units("large")) < 5000:
        store.replicate("large", base, f"#copy{count}")
    assert (store.count_units("small"), store.count_units("large")) == (500, 5000)

    # Interleaved, so whatever else the machine does in the meantime falls on both sizes.
    times: dict[str, list[float]] = {"small": [], "large": []}
    for index in range(15):
        for user, taken in times.items():
            key = memory.add(said(20_000 + index), user_id=user)
            started = time.perf_counter()
            memory.delete(key, user_id=user)
            taken.append((time.perf_counter() - started) * 1000)
    small, large = (statistics.median(times[user][3:]) for user in ("small", "large"))
    assert large <= DELETE_GROWTH * small, f"delete p50 {small:.1f} ms at 500, {large:.1f} at 5,000"
    assert store.count_units("large") == 5000
