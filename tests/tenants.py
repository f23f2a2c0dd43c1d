"""Synthetic users for isolation and forgetting tests: look-alike lives, distinct secrets.

Every tenant knows a "Maya", lives somewhere, and told memory a secret; the names, places and
dates overlap on purpose, so a leak through any channel (vector, BM25, cue index, edges, root
memories) shows up as another tenant's secret in the evidence.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ripplegraph.agent.memory import Session, Turn

TENANTS = ["alice", "alice/work", "bob:1", "carol@example.com", "dave.2", "erin"]
_FOODS = ["peanuts", "shellfish", "gluten", "sesame", "dairy", "eggs"]
_PLACES = ["Lisbon", "Porto", "Lisbon", "Oslo", "Porto", "Kyoto"]
_HOBBIES = ["bouldering", "chess", "sailing", "pottery", "running", "baking"]


def secret(index: int) -> str:
    """A token only tenant ``index`` ever said."""
    return f"vault{index}code{7919 * (index + 3)}"


def tenant_sessions(index: int) -> list[Session]:
    """Three sessions of one tenant's life."""
    user = f"User{index}"
    start = datetime(2024, 3, 1) + timedelta(days=index % 3)
    food, place, hobby = _FOODS[index], _PLACES[index], _HOBBIES[index]
    lines = [
        [
            (user, f"My friend Maya is allergic to {food}, so we never cook with it."),
            ("Maya", f"{user}, my locker combination is {secret(index)}, keep it safe."),
            (user, f"We met Tom at the market in {place} on Tuesday."),
            ("Tom", f"{user} has been into {hobby} since last spring."),
        ],
        [
            (user, f"I am planning a trip to {place} with Maya next month."),
            ("Maya", f"Book the hotel near the {place} station, {user}."),
            (user, f"Tom said the {hobby} club meets on Fridays."),
            ("Tom", "I moved to a new flat last week."),
        ],
        [
            (user, f"Maya's birthday dinner is on the 20th; no {food} please."),
            ("Tom", f"I can bring the {hobby} photos to the dinner."),
            (user, f"Remember {secret(index)} is Maya's locker code, not mine."),
            ("Maya", "Thanks for remembering my allergy."),
        ],
    ]
    return [
        Session(
            id=f"s{number}",
            date=start + timedelta(days=7 * number),
            turns=[
                Turn(speaker=who, text=text, id=f"s{number}t{i}")
                for i, (who, text) in enumerate(turns)
            ],
        )
        for number, turns in enumerate(lines, start=1)
    ]
