"""The offline sufficiency check: coverage of the query's cues and terms in the top evidence."""

from __future__ import annotations

from collections.abc import Sequence

from ripplegraph.agent.decisions.policies.sufficiency import (
    ANOTHER_SESSION,
    COVERAGE_WINDOW,
    NOTHING_TO_FIND,
    OWN_DECISION,
    UNSEEN,
    OfflineSufficiency,
    findable,
    missing_support,
    rounds_spent,
)
from ripplegraph.agent.memory import MemoryUnit, Provenance
from ripplegraph.agent.state import Evidence, QueryCues


def item(
    text: str, session: str = "s1", people: tuple[str, ...] = (), places: tuple[str, ...] = ()
) -> Evidence:
    memory = MemoryUnit(
        id=f"m{abs(hash((text, session)))}",
        namespace="ns",
        text=text,
        people=list(people),
        places=list(places),
        provenance=Provenance(session_id=session),
    )
    return Evidence(memory=memory)


FILLER = [item(f"nothing relevant number {i}") for i in range(COVERAGE_WINDOW)]


def test_every_cue_and_term_must_be_in_the_top_evidence() -> None:
    cues = QueryCues(people=["Maya "], places=["Harbor Grill"], terms=["allergy", "dinner"])
    ranked = [item("We had dinner there", people=("Maya",), places=("Harbor  Grill",))]
    assert missing_support(cues, ranked) == ["allergy"]
    assert missing_support(cues, [*ranked, item("her allergy")]) == []


def test_only_the_coverage_window_counts() -> None:
    cues = QueryCues(terms=["allergy"])
    assert COVERAGE_WINDOW == 10
    assert missing_support(cues, [*FILLER[:9], item("an allergy")]) == []
    assert missing_support(cues, [*FILLER, item("an allergy")]) == ["allergy"]


def test_a_multi_part_question_needs_support_from_two_sessions() -> None:
    cues = QueryCues(terms=["mug", "book"], multi_part=True)
    one_session = [item("bought mugs"), item("bought a book")]
    assert missing_support(cues, one_session) == ["support from another session"]
    two = [item("bought mugs"), item("bought a book", session="s2")]
    assert missing_support(cues, two) == []
    unrelated_second = [item("bought mugs"), item("a book"), item("rain", session="s2")]
    assert missing_support(cues, unrelated_second) == ["support from another session"]


def test_decisions() -> None:
    policy = OfflineSufficiency()
    advice = QueryCues(terms=["dinner"], decision=True)
    covered = [item("a dinner")]
    first = policy.decide(advice, covered, refined=False, can_refine=True, expanded=False)
    assert (first.decision, first.missing) == ("refine", [])
    assert first.reason == "advice/plan question: look for constraints first"
    for refined, can_refine in ((True, True), (False, False)):
        verdict = policy.decide(
            advice, covered, refined=refined, can_refine=can_refine, expanded=True
        )
        assert verdict.decision == "stop" and verdict.missing == []
    gap = QueryCues(terms=["dinner", "allergy", "seafood"])
    for expanded in (False, True):
        more = policy.decide(gap, covered, refined=False, can_refine=True, expanded=expanded)
        assert more.decision == "expand" and more.missing == ["allergy", "seafood"]
        assert more.reason == "not covered: allergy, seafood"
    plain = QueryCues(terms=["dinner"])
    stop = policy.decide(plain, covered, refined=False, can_refine=True, expanded=True)
    assert (stop.decision, stop.missing) == ("stop", [])
    assert stop.reason == "every query cue and term is covered by the evidence"


def test_a_covered_question_is_recollected_once_for_what_coverage_cannot_see() -> None:
    policy = OfflineSufficiency()
    covered = [item("I'm reading Dune"), item("I read a fantasy series", session="s2")]
    books = QueryCues(terms=["read"], multi_part=True)
    once = policy.decide(books, covered, refined=False, can_refine=False, expanded=False)
    assert (once.decision, once.missing) == ("expand", [UNSEEN])
    assert once.reason == "covered, but not yet recollected around it"
    after = policy.decide(books, covered, refined=False, can_refine=False, expanded=True)
    assert after.decision == "stop"
    advice = QueryCues(terms=["read"], decision=True)
    refined = policy.decide(advice, covered, refined=True, can_refine=True, expanded=False)
    assert refined.decision == "expand", "after its refinement, a decision is recollected too"


def test_a_stop_for_spent_rounds_says_what_is_spent_and_what_is_unmatched() -> None:
    assert rounds_spent(1, 1, ["gave", "cost"]) == (
        "recollection rounds spent (1 of 1); no top evidence holds the words: gave, cost"
    )
    assert rounds_spent(0, 0, [UNSEEN]) == (
        "recollection rounds spent (0 of 0); every cue of the question is covered"
    )


def test_only_what_a_memory_could_supply_is_findable() -> None:
    missing = ["gift", "tuesday", ANOTHER_SESSION]
    assert findable(missing, ["gift"], sessions=1) == ["gift"]
    assert findable(missing, [], sessions=2) == [ANOTHER_SESSION]
    assert findable(missing, ["tuesday", "gift"], sessions=3) == missing


def test_a_further_round_only_while_something_missing_is_findable() -> None:
    policy = OfflineSufficiency()
    cues = QueryCues(terms=["mug", "gave", "cost"], multi_part=True)
    ranked = [item("bought mugs")]
    asked: list[list[str]] = []

    def nothing(missing: Sequence[str]) -> list[str]:
        asked.append(list(missing))
        return []

    first = policy.decide(
        cues, ranked, refined=False, can_refine=False, expanded=False, reachable=nothing
    )
    assert first.decision == "expand" and not asked, "the first round runs regardless"
    after = policy.decide(
        cues, ranked, refined=False, can_refine=False, expanded=True, reachable=nothing
    )
    assert (after.decision, after.missing) == ("stop", ["gave", "cost", ANOTHER_SESSION])
    assert after.reason == f"not covered: gave, cost, {ANOTHER_SESSION}"
    assert after.stopped_by == NOTHING_TO_FIND
    assert asked == [["gave", "cost", ANOTHER_SESSION]]
    some = policy.decide(
        cues, ranked, refined=False, can_refine=False, expanded=True, reachable=lambda m: m[:1]
    )
    assert (some.decision, some.missing) == ("expand", ["gave", "cost", ANOTHER_SESSION])
    covered = policy.decide(
        QueryCues(terms=["mug"]), ranked, refined=False, can_refine=False, expanded=True,
        reachable=nothing,
    )  # fmt: skip
    assert covered.reason == "every query cue and term is covered by the evidence"


def test_a_decision_of_the_askers_own_is_recollected_once() -> None:
    policy = OfflineSufficiency()
    ranked = [item("a dinner")]
    own = QueryCues(terms=["dinner", "shellfish"], decision=True, first_person=True)
    theirs = QueryCues(terms=["dinner", "shellfish"], decision=True)
    for expanded in (False, True):
        first = policy.decide(
            own, ranked, refined=True, can_refine=False, expanded=expanded,
            own_decisions_once=True,
        )  # fmt: skip
        assert first.decision == ("stop" if expanded else "expand")
    once = policy.decide(
        own, ranked, refined=True, can_refine=False, expanded=True, own_decisions_once=True
    )
    assert (once.missing, once.stopped_by) == (["shellfish"], OWN_DECISION)
    for cues, flag in ((theirs, True), (own, False)):
        again = policy.decide(
            cues, ranked, refined=True, can_refine=False, expanded=True, own_decisions_once=flag
        )
        assert (again.decision, again.stopped_by) == ("expand", "")
