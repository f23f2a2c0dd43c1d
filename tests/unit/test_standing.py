"""Standing facts by grammar: disclosures in, episodes, tasks and assistant turns out."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pytest

from ripplegraph.agent.decisions.policies.standing import (
    Standing,
    overridden,
    said,
    same_attribute,
    standing_fact,
)
from ripplegraph.agent.memory import MemoryUnit, Provenance


def unit(
    text: str, speaker: str = "User", uid: str = "m", named: tuple[str, ...] = ()
) -> MemoryUnit:
    return MemoryUnit(
        id=uid, namespace="ns", text=f"{speaker}: {text}", people=[speaker, *named],
        provenance=Provenance(
            session_id="s", turn_ids=[uid], speaker=speaker, session_time=datetime(2026, 1, 1)
        ),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("I'm seven months pregnant, so my doctor wants me to take it easy.", "state"),
        ("I got laid off from the agency on Friday.", "change"),
        ("We just adopted a puppy called Biscuit.", "change"),
        ("Our daughter was born two weeks ago, so we are barely sleeping.", "change"),
        ("My physio cleared me last week: my back has fully healed.", "change"),
        ("I've been vegetarian since January and I'm sticking with it.", "state"),
        ("I live in a small flat in Rotterdam.", "state"),
        ("I never eat anything with peanuts in it.", "commitment"),
        ("Thanks! Also, I'm allergic to shellfish.", "state"),
        ("I strongly dislike podcasts and prefer interactive courses.", "preference"),
        ("I have a strong aversion to gamified learning.", "preference"),
        ("I think I'll go with option 1. The online ones don't really appeal to me.", "preference"),
    ],
)
def test_a_first_person_disclosure_is_a_standing_fact(text: str, kind: str) -> None:
    found = standing_fact(unit(text))
    assert found is not None and found.kind == kind
    assert found.sentence in text and found.reason.startswith(f"{kind}: ")


@pytest.mark.parametrize(
    ("text", "speaker"),
    [
        ("We discussed the weather and shared some photos.", "User"),  # an episode
        ("Write 10 tests for it", "User"),  # a task
        ("Can you suggest a hard weekend hike for us?", "User"),  # a question
        ("I'm trying to convert this function to Go: def f(): return 1", "User"),  # code
        ("I'm allergic to shellfish.", "Assistant"),  # the assistant restating
        ("I have some time tomorrow, my schedule is open and money is fine.", "User"),
        (" ".join(["I got laid off"] + ["and then"] * 30), "User"),  # an essay, not a sentence
    ],
)
def test_episodes_tasks_and_assistant_turns_are_not(text: str, speaker: str) -> None:
    assert standing_fact(unit(text, speaker)) is None


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Maya is allergic to shellfish, remember that.", "state"),
        ("My sister is seven months pregnant.", "state"),
        ("She got laid off in May.", "change"),
        ("Maya never eats anything spicy.", "commitment"),
    ],
)
def test_what_the_speaker_says_of_someone_else_stands_too(text: str, kind: str) -> None:
    found = standing_fact(unit(text, "Alex", named=("Maya",)))
    assert found is not None and found.kind == kind


def test_a_named_speakers_own_state_is_a_standing_fact() -> None:
    memory = unit("Sarah Garcia's physical health status changed from 'Challenged' to 'Improved'.",
                  speaker="Sarah Garcia")  # fmt: skip
    found = standing_fact(memory)
    assert found is not None and found.kind == "change"
    assert said(memory).startswith("Sarah Garcia's physical")


def fact(
    text: str, kind: str, speaker: str = "User", uid: str = "m"
) -> tuple[MemoryUnit, Standing]:
    return unit(text, speaker, uid), Standing(kind, text)  # type: ignore[arg-type]


def test_a_newer_change_supersedes_older_facts_of_the_same_attribute_and_speaker() -> None:
    facts = [
        fact("I'm self-employed, I run a bakery.", "state", uid="a"),
        fact("I'm vegan.", "state", uid="b"),
        fact("I'm self-employed, I run a bakery.", "state", "Tom", uid="c"),
        fact("I live in Rotterdam.", "state", uid="d"),
        fact("I retired in March and sold the bakery.", "change", uid="e"),
    ]
    vectors = np.asarray(
        [[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.9, 0.44], [0.96, 0.28]], dtype=np.float32
    )
    # not b (far), not c (Tom's), not d (near, but neither a shared word nor the state it ends)
    assert overridden(4, facts, vectors) == [0]
    assert overridden(1, facts, vectors) == []  # a state supersedes nothing
    assert overridden(0, facts, vectors) == []


@pytest.mark.parametrize(
    ("older", "newer", "same"),
    [
        ("I live in a flat in Rotterdam.", "We moved to Denver last month.", True),
        ("I'm a junior developer.", "I was promoted to engineering manager.", True),
        ("I hurt my back badly in February.", "My physio cleared me: my back has healed.", True),
        ("I tore a ligament in my knee.", "My physio cleared me: my back has healed.", False),
        ("I'm seven months pregnant.", "Our daughter was born two weeks ago.", True),
    ],
)
def test_same_attribute_needs_a_shared_word_or_the_state_a_change_ends(
    older: str, newer: str, same: bool
) -> None:
    assert same_attribute(fact(newer, "change"), fact(older, "state"), 0.35) is same
    assert not same_attribute(fact(newer, "change"), fact(older, "state"), 0.2)
