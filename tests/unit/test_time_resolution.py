from datetime import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ripplegraph.agent.memory import TimeInterval
from ripplegraph.agent.memory.cues import TimeResolver

BASE = datetime(2023, 5, 8, 13, 56)  # a Monday


def days(a: str, b: str) -> tuple[datetime, datetime]:
    return datetime.fromisoformat(a), datetime.fromisoformat(b)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I went to a support group yesterday.", days("2023-05-07", "2023-05-08")),
        ("We met last week at the park.", days("2023-05-01", "2023-05-08")),
        ("See you next month!", days("2023-06-01", "2023-07-01")),
        ("Last Saturday was fun.", days("2023-05-06", "2023-05-07")),
        ("I moved here in May 2023.", days("2023-05-01", "2023-06-01")),
        ("Two weekends ago we hiked.", days("2023-04-29", "2023-05-01")),
        ("It happened a few days ago.", days("2023-05-03", "2023-05-08")),
        ("Last weekend we went camping.", days("2023-05-06", "2023-05-08")),
        ("Back in 2022 I started painting.", days("2022-01-01", "2023-01-01")),
        ("The gig was on 8 May, 2023.", days("2023-05-08", "2023-05-09")),
        ("Two weeks ago I ran a 10k.", days("2023-04-24", "2023-05-01")),
    ],
)
def test_expressions_resolve_to_intervals(text: str, expected: tuple[datetime, datetime]) -> None:
    found = TimeResolver().find(text, BASE)
    assert found, text
    assert (found[0].start, found[0].end) == expected


def test_modal_may_is_not_a_date() -> None:
    assert TimeResolver().find("I may 5 times have said so", BASE) == []


def test_text_without_dates_has_none() -> None:
    assert TimeResolver().find("I love painting sunsets with my kids.", BASE) == []


@given(
    st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2030, 12, 31)),
    st.sampled_from(["yesterday", "last week", "next month", "last Saturday", "last year"]),
)
def test_resolution_is_a_valid_interval_near_the_base(base: datetime, phrase: str) -> None:
    interval = TimeResolver().resolve(phrase, base)
    assert interval is not None
    assert interval.start < interval.end
    assert interval.gap_days(TimeInterval.day_of(base)) <= 400


def test_interval_gap_and_overlap() -> None:
    a = TimeInterval.day_of(datetime(2023, 5, 1))
    b = TimeInterval.day_of(datetime(2023, 5, 4))
    assert not a.overlaps(b)
    assert a.gap_days(b) == pytest.approx(2.0)
    assert b.gap_days(a) == pytest.approx(2.0)
    assert a.overlaps(TimeInterval(start=datetime(2023, 4, 30), end=datetime(2023, 5, 1, 1)))
    with pytest.raises(ValueError, match="ends"):
        TimeInterval(start=datetime(2023, 5, 2), end=datetime(2023, 5, 1))
