"""One spend type: steps add up, limits say what is left, the state's counters round-trip."""

from __future__ import annotations

from ripplegraph.agent.decisions.roles import Usage
from ripplegraph.agent.spend import NOTHING, Spend
from ripplegraph.agent.state import Budget, RecallState, spent_after


def test_spends_add_in_both_counters() -> None:
    assert Spend(1, 100) + Spend(2, 50) == Spend(3, 150)
    assert NOTHING + Spend(1, 1) == Spend(1, 1)


def test_what_is_left_of_a_limit_may_go_negative() -> None:
    limit = Spend(calls=6, tokens=16_000)
    assert Spend(2, 5_500).left_of(limit) == Spend(4, 10_500)
    assert Spend(7, 0).left_of(limit) == Spend(-1, 16_000)


def test_within_needs_both_counters_under_the_limit() -> None:
    limit = Spend(6, 16_000)
    assert Spend(6, 16_000).within(limit)
    assert not Spend(7, 0).within(limit)
    assert not Spend(0, 16_001).within(limit)


def test_state_counters_round_trip() -> None:
    spend = Spend(3, 1_200)
    assert spend.counters() == {"llm_calls": 3, "tokens": 1_200}
    assert Budget(**spend.counters()).spent == spend


def test_a_steps_usage_charges_and_leaves_what_its_allowance_allows() -> None:
    usage = Usage()
    usage.charge(Spend(1, 40))
    usage.charge(Spend(1, 60))
    assert usage.spent == Spend(2, 100)
    assert usage.left(Spend(3, 150)) == Spend(1, 50)


def test_a_trace_events_budget_adds_the_steps_spend() -> None:
    state = RecallState(query="q", namespace="n", llm_calls=2, tokens=500, rounds=1)
    after = spent_after(state, Spend(1, 300), refinements=1)
    assert after == {"llm_calls": 3, "tokens": 800, "rounds": 1, "hops": 0, "refinements": 1}
    assert state.spent == Spend(2, 500)
