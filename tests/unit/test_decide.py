"""The deciding nodes' one seam: the role when a model is configured, else the policy."""

from __future__ import annotations

from typing import Any

from ripplegraph.agent.decisions.roles import Usage, decide
from ripplegraph.agent.spend import Spend

MODEL: Any = object()  # decide hands the caller to ``ask`` untouched


def spent(calls: int, note: str = "") -> Usage:
    return Usage(spent=Spend(calls, 10 * calls), notes=[note] if note else [])


def test_without_a_model_the_policy_decides_and_nothing_is_spent() -> None:
    decided = decide(None, lambda: "offline", lambda caller: ("model", spent(1)))
    assert (decided.value, decided.asked, decided.by_model) == ("offline", False, False)
    assert decided.usage.spent.calls == 0 and decided.details("router") == {}


def test_a_failed_role_falls_back_and_its_spend_still_counts() -> None:
    decided = decide(MODEL, lambda: "offline", lambda caller: (None, spent(3, "invalid JSON")))
    assert (decided.value, decided.asked, decided.by_model) == ("offline", True, False)
    assert decided.usage.spent.calls == 3 and decided.details("router")["llm"]["calls"] == 3


def test_the_model_decides_when_it_answers_and_its_notes_follow_its_reason() -> None:
    calls: list[object] = []

    def ask(caller: object) -> tuple[str | None, Usage]:
        calls.append(caller)
        return "model", spent(2, "1 retry")

    decided = decide(MODEL, lambda: "offline", ask)
    assert (decided.value, decided.by_model, calls) == ("model", True, [MODEL])
    assert decided.noted("LLM router: fits") == "LLM router: fits [1 retry]"
