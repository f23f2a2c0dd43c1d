"""ActMem-style advice scenarios: a decisive disclosure hidden in real user–assistant chat.

Each scenario of ``tests/scenarios/advice.json`` holds one or two first-person disclosures
and a question that does not name them.  The noise is real chat (PrefEval's
``filtered_inter_turns.json``: coding help, essays, trivia), about 250 turns of it.  A lone
disclosure goes into the middle of the chat; where there are two, the first (an older state)
goes a quarter of the way in and the second (the newer state that overrides it) three
quarters in.  The decisive memory is the last disclosure.  Earlier, in the first three
conversations, the same user disclosed the facts of ``BACKGROUND`` other one-disclosure
scenarios: the question has to find its own among several standing facts, not merely the
only one, and nothing disclosed later contradicts the scenario's own story.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from ripplegraph.agent.memory import Session, Turn

SCENARIOS = Path(__file__).parent / "scenarios" / "advice.json"
NOISE = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "data"
    / "prefeval"
    / ("filtered_inter_turns.json")
)
USER = "User"
NOISE_TURNS = 250
BACKGROUND = 6
_START = datetime(2026, 1, 5, 18, 0)


@dataclass
class Scenario:
    """One advice scenario: its sessions, its question and the id of the decisive turn."""

    name: str
    question: str
    sessions: list[Session]
    decisive: str
    superseded: str | None


def noise_conversations(path: Path = NOISE, turns: int = NOISE_TURNS) -> list[list[Turn]]:
    """Whole chat conversations, in file order, until they hold ``turns`` turns."""
    conversations: list[list[Turn]] = []
    total = 0
    for item in json.loads(path.read_text(encoding="utf-8")):
        chat = [
            Turn(speaker=USER if t["role"] == "user" else "Assistant", text=t["content"][:4000])
            for t in item["conversation"]
            if t["content"].strip()
        ]
        conversations.append(chat)
        total += len(chat)
        if total >= turns:
            break
    return conversations


def build(spec: dict[str, object], background: list[str], noise: list[list[Turn]]) -> Scenario:
    """The scenario's sessions: one per noise conversation, a day apart."""
    disclosures = [str(d) for d in spec["disclosures"]]  # type: ignore[union-attr]
    slots = [len(noise) // 2] if len(disclosures) == 1 else [len(noise) // 4, 3 * len(noise) // 4]
    others: dict[int, list[str]] = {}
    for i, text in enumerate(background):
        others.setdefault(i % 3, []).append(text)
    sessions = []
    ids: list[str] = []
    for index, chat in enumerate(noise):
        turns = list(chat)
        for text in others.get(index, []):
            turns.insert(min(4, len(turns)), Turn(speaker=USER, text=text))
        if index in slots:
            turn_id = f"{spec['name']}-disclosure-{slots.index(index) + 1}"
            text = disclosures[slots.index(index)]
            turns.insert(min(2, len(turns)), Turn(speaker=USER, text=text, id=turn_id))
            ids.append(turn_id)
        sessions.append(
            Session(id=f"{spec['name']}-s{index}", date=_START + timedelta(days=index), turns=turns)
        )
    return Scenario(
        name=str(spec["name"]),
        question=str(spec["question"]),
        sessions=sessions,
        decisive=ids[-1],
        superseded=ids[0] if len(ids) > 1 else None,
    )


def scenarios(noise_path: Path = NOISE) -> list[Scenario]:
    """Every scenario, each over the same noise."""
    noise = noise_conversations(noise_path)
    specs = json.loads(SCENARIOS.read_text(encoding="utf-8"))
    single = [
        (spec["name"], str(spec["disclosures"][0]))
        for spec in specs
        if len(spec["disclosures"]) == 1
    ]
    built = []
    for i, spec in enumerate(specs):
        others = [text for name, text in single[i:] + single[:i] if name != spec["name"]]
        built.append(build(spec, others[:BACKGROUND], noise))
    return built
