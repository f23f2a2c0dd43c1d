"""Offline recollection planning: which pooled memories the walk starts from, and its target."""

from __future__ import annotations

from ripplegraph.agent.decisions.policies.planning import plan_recollection
from ripplegraph.agent.memory import MemoryUnit, Provenance
from ripplegraph.agent.state import Evidence, QueryCues


def item(mid: str, text: str, session: str, anchor: bool = False) -> Evidence:
    memory = MemoryUnit(
        id=mid,
        namespace="ns",
        text=text,
        people=["John"],
        provenance=Provenance(session_id=session, speaker="John"),
    )
    return Evidence(memory=memory, anchor=anchor)


BOOKS = QueryCues(people=["John"], terms=["book"])


def anchors(ranked: list[Evidence], planned: bool = True, k: int = 3) -> list[str]:
    plan = plan_recollection("What books has John read?", BOOKS, ranked, [], k, planned)
    return plan.anchors


def test_anchors_carry_the_questions_content_one_per_session_first() -> None:
    ranked = [
        item("hi", "John: hi there", "s1"),
        item("b1", "John: this book is great", "s1"),
        item("b2", "John: another book I loved", "s1"),
        item("b3", "John: a book on my shelf", "s2"),
        item("chat", "John: work was busy", "s3"),
    ]
    assert anchors(ranked) == ["b1", "b3", "chat"], "about the books first, one per session"
    assert anchors(ranked, k=4) == ["b1", "b3", "chat", "b2"], "then the rest, best first"
    assert anchors(ranked, planned=False) == ["hi", "b1", "b2"], "the ablation: the top items"


def test_a_memory_of_one_session_still_gets_every_anchor() -> None:
    ranked = [item(f"m{i}", f"John: book number {i}", "only") for i in range(4)]
    assert anchors(ranked) == ["m0", "m1", "m2"]
    seen = [item("old", "John: a book again", "s0", anchor=True), *ranked]
    assert "old" not in anchors(seen), "an anchor of an earlier round is not chosen again"
