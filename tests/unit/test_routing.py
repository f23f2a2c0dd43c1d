"""The typed router on its own: every budget it re-checks can stop the machine by itself."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.runtime import Runtime

from ripplegraph.agent.context import Context
from ripplegraph.agent.routing import after_sufficiency
from ripplegraph.agent.state import Decision, RecallState


def route(decision: Decision, context: Context | None = None, **spent: Any) -> str:
    state = RecallState(query="q", namespace="ns", decision=decision, **spent)
    return after_sufficiency(state, Runtime(context=context or Context()))


def test_a_wish_is_followed_while_the_budget_allows_it() -> None:
    assert route("expand") == "plan_recollection"
    assert route("refine") == "refine_counterfactually"
    assert route("stop") == "assemble_evidence"


@pytest.mark.parametrize(
    ("decision", "spent"),
    [
        ("expand", {"rounds": 2}),  # R = 2 by default
        ("refine", {"refinements": 1}),
        ("expand", {"llm_calls": 7}),  # llm_budget.calls = 6
        ("refine", {"tokens": 16_001}),  # llm_budget.tokens = 16,000
    ],
)
def test_each_spent_budget_ends_in_assembly(decision: Decision, spent: dict[str, int]) -> None:
    assert route(decision, **spent) == "assemble_evidence"


def test_a_budget_spent_exactly_to_its_limit_still_allows_the_offline_loop() -> None:
    """Expansion and refinement need no call of their own; only an overrun ends them."""
    assert route("expand", llm_calls=6, tokens=16_000) == "plan_recollection"
    assert route("refine", llm_calls=6, tokens=16_000) == "refine_counterfactually"


def test_limits_come_from_the_context_clamped() -> None:
    three_rounds = Context(recall={"rounds": 3})
    assert route("expand", three_rounds, rounds=2) == "plan_recollection"
    assert route("expand", three_rounds, rounds=3) == "assemble_evidence"
    unbounded = Context(recall={"rounds": 1_000})  # clamped to 3
    assert route("expand", unbounded, rounds=3) == "assemble_evidence"


def test_a_recipe_without_the_mechanism_never_routes_to_it() -> None:
    first_hop = Context(recall_recipe="first_hop")
    assert route("expand", first_hop) == "assemble_evidence"
    assert route("refine", first_hop) == "assemble_evidence"
