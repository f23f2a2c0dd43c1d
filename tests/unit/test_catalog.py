"""The memory browser's list of a namespace's units: edited in place, rebuilt when sparse."""

from __future__ import annotations

from ripplegraph.agent.surfaces.ui.catalog import Written
from tests.unit.test_lexical import unit

UNITS = [unit(number, f"memory {number}") for number in range(1, 9)]


def test_a_forget_empties_slots_and_the_list_keeps_write_order() -> None:
    log = Written.of(UNITS[:6]).extended(UNITS[6:])
    held = log.units()
    assert log.without([UNITS[1], UNITS[6]]) is log
    assert [u.id for u in log.units()] == [u.id for u in UNITS if u not in (UNITS[1], UNITS[6])]
    assert held == UNITS, "a page rendering the earlier list keeps what it read"
    assert log.without([unit(99, "written after the list last grew")]) is log


def test_a_list_more_empty_than_full_asks_to_be_built_again() -> None:
    log = Written.of(UNITS)
    assert log.without(UNITS[:4]) is log  # half empty: kept
    assert log.without(UNITS[4:5]) is None
