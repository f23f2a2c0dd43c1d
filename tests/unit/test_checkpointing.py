"""Checkpointed graph states restore as RippleGraph's own types, from before the move too."""

from __future__ import annotations

import pytest

from ripplegraph.agent.memory import MemoryKind, MemoryUnit, Provenance
from ripplegraph.agent.surfaces.checkpointing import serializer

UNIT = MemoryUnit(
    id="m1",
    namespace="ns",
    text="Maya is allergic to shellfish",
    provenance=Provenance(session_id="s1"),
)


def test_a_channel_of_memory_units_restores_as_memory_units() -> None:
    serde = serializer()
    written = serde.dumps_typed({"units": [UNIT]})
    assert b"ripplegraph.agent.memory.model" in written[1]
    restored = serde.loads_typed(written)
    assert restored == {"units": [UNIT]} and isinstance(restored["units"][0], MemoryUnit)


def test_a_thread_checkpointed_before_the_memory_model_moved_restores(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    serde = serializer()
    # A thread written when the memory model lived in ``ripplegraph.agent.memory`` names it there.
    for moved in (MemoryUnit, MemoryKind):
        monkeypatch.setattr(moved, "__module__", "ripplegraph.agent.memory")
    written = serde.dumps_typed({"units": [UNIT]})
    monkeypatch.undo()
    assert b"ripplegraph.agent.memory.model" not in written[1]
    restored = serde.loads_typed(written)
    assert restored == {"units": [UNIT]} and isinstance(restored["units"][0], MemoryUnit)
