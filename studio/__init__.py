"""What LangGraph Studio and the demo need: the demo history and its questions."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from ripplegraph.agent.memory import Session

DEMO_NAMESPACE = "demo"


def _demo() -> dict[str, Any]:
    text = resources.files(__name__).joinpath("demo_history.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def demo_sessions() -> list[Session]:
    """The built-in demo history: the seed papers' scenarios with chit-chat between them."""
    return [Session.model_validate(s) for s in _demo()["sessions"]]


def demo_questions() -> list[str]:
    """Questions whose answers need evidence spread across the demo's sessions."""
    return [str(q) for q in _demo()["questions"]]
