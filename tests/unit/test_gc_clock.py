"""The bench's garbage-collector clock counts what the collector ran while it was entered."""

from __future__ import annotations

import gc

from ripplegraph.agent.eval.scale import GcClock


def test_collections_are_counted_by_generation_only_while_entered() -> None:
    with GcClock() as clock:
        gc.collect(0)
        gc.collect(2)
    gc.collect(2)  # after the clock: not counted
    assert clock.collections[0] >= 1 and clock.collections[2] == 1
    assert clock.longest > 0 and clock.seconds[2] <= clock.longest + 1e-9
    summary = clock.summary(recalls=2)
    assert summary["recalls"] == 2 and summary["oldest_collections"] == 1
    assert summary["oldest_ms_per_recall"] == round(clock.seconds[2] * 1000 / 2, 2)
    assert summary["tracked_objects"] > 0
    assert clock._observe not in gc.callbacks
