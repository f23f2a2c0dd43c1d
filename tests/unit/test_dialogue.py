"""A namespace's sessions in write order, followed through writes and forgets, no model."""

from __future__ import annotations

from ripplegraph.agent.memory import MemoryUnit, Provenance
from ripplegraph.agent.store.dialogue import Dialogue


def unit(mid: str, session: str) -> MemoryUnit:
    return MemoryUnit(id=mid, namespace="ns", text=mid, provenance=Provenance(session_id=session))


def test_each_unit_has_the_one_before_and_after_in_its_session() -> None:
    dialogue = Dialogue.of([unit("a", "s1"), unit("b", "s1"), unit("x", "s2"), unit("c", "s1")])
    assert dialogue.beside(["b"]) == [("b", "a"), ("b", "c")], "before, then after"
    assert dialogue.beside(["a", "c", "x"]) == [("a", "b"), ("c", "b")], "ends; a lone unit"
    assert dialogue.beside(["unknown"]) == []


def test_a_write_appends_and_a_forget_is_stepped_over() -> None:
    dialogue = Dialogue.of([unit("a", "s1"), unit("b", "s1"), unit("c", "s1")])
    dialogue.extended([unit("d", "s1"), unit("b", "s1")])  # b again: already held
    assert dialogue.beside(["c"]) == [("c", "b"), ("c", "d")]
    dialogue.without([unit("b", "s1"), unit("never", "s1")])
    assert dialogue.beside(["a", "c"]) == [("a", "c"), ("c", "a"), ("c", "d")]
    dialogue.without([unit("a", "s1"), unit("c", "s1"), unit("d", "s1")])
    assert dialogue.beside(["a", "c", "d"]) == []
    dialogue.extended([unit("e", "s1"), unit("f", "s1")])
    assert dialogue.beside(["e"]) == [("e", "f")], "an emptied session starts again"
