"""What the memory browser shows, read from a ``MemoryStore``.

Pages of namespaces and memories, one memory with its edges and standing, what the store
knows about a person.  Pure reads over the store's public methods, so the pages show exactly
what recall sees.  A namespace's memories in write order are a followed value (grown with its
writes, shrunk by a forget, bounded like every derived value), so a page of a large
namespace filters a list in memory rather than reading every row again.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from ripplegraph.agent.decisions.policies.counterfactual import Constraints, standing_constraints
from ripplegraph.agent.decisions.policies.standing import Standing, standing_fact
from ripplegraph.agent.memory import FIRST_YEAR, LAST_YEAR, MemoryUnit, RootUnit
from ripplegraph.agent.memory.items import name_of
from ripplegraph.agent.memory.text import normalise_cue
from ripplegraph.agent.store import MemoryStore
from ripplegraph.agent.store.edges import CAUSAL_TYPES, LINK_TYPES

PAGE = 50
"""Rows per page of every list."""

Kind = Literal["", "turn", "standing", "item", "root"]
"""The kinds of memory a namespace page filters by ("" is every memory unit)."""
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=400)]
"""A namespace as a request names it (``Browser.allowed`` says where it is stored)."""


class Filters(BaseModel):
    """A namespace page's filters; an unknown one is refused, not ignored."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    ns: Name
    speaker: str = Field("", max_length=200)
    session: str = Field("", max_length=200)
    since: date | None = None
    until: date | None = None
    kind: Kind = ""
    page: int = Field(1, ge=1, le=1_000_000)
    done: Literal["", "forgot"] = ""

    @field_validator("since", "until")
    @classmethod
    def _in_range(cls, day: date | None) -> date | None:
        """The years a memory's date may fall in, as everywhere else (``agent.memory``)."""
        if day is not None and not FIRST_YEAR <= day.year <= LAST_YEAR:
            raise ValueError(f"a date must fall in the years {FIRST_YEAR} to {LAST_YEAR}")
        return day


@dataclass(frozen=True)
class NamespaceRow:
    """One namespace on the first page: how much it holds and when it last changed."""

    name: str
    """The namespace as it is named (``agent.memory.items.name_of``)."""
    memories: int
    standing: int
    items: int
    last_change: datetime | None


@dataclass(frozen=True)
class Row:
    """A memory in a list: the unit and what kind of memory it is."""

    unit: MemoryUnit
    item_key: str | None
    standing: Standing | None
    superseded_by: str | None


@dataclass(frozen=True)
class Listing:
    """One page of a namespace's memories (or root units), newest first."""

    rows: list[Row]
    roots: list[RootUnit]
    total: int
    page: int
    pages: int
    speakers: list[str]
    people: list[str]


@dataclass(frozen=True)
class Neighbour:
    """An edge of a memory and the memory at its other end."""

    type: str
    weight: float
    unit: MemoryUnit


@dataclass(frozen=True)
class MemoryView:
    """One memory: itself, its item, its standing, its edges, the roots that cite it."""

    row: Row
    supersedes: list[MemoryUnit]
    superseding: MemoryUnit | None
    neighbours: list[Neighbour]
    roots: list[RootUnit]


@dataclass(frozen=True)
class PersonView:
    """What the namespace holds as standing about one person, grouped by topic."""

    name: str
    facts: dict[str, list[Row]] = field(default_factory=dict)
    roots: dict[str, list[RootUnit]] = field(default_factory=dict)


def written(store: MemoryStore, namespace: str) -> list[MemoryUnit]:
    """The namespace's units in write order (a followed value: writes and forgets edit it)."""
    log: Written = store.follow("browser", namespace, Written.of, Written.extended, Written.without)
    return log.units()


class Written:
    """A namespace's units in write order, edited in place at the cost of what changed.

    A forgotten unit leaves an empty slot (its text no longer held), so a forget costs the
    units it removes, not the namespace; when more slots are empty than full, ``without``
    declines and the list is built again.  A page reads a copy (``units``), so an edit while
    it renders changes nothing it holds.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._slots: list[MemoryUnit | None] = []
        self._position: dict[str, int] = {}

    @classmethod
    def of(cls, units: Sequence[MemoryUnit]) -> Written:
        """The units, in the order given."""
        return cls().extended(units)

    def extended(self, units: Sequence[MemoryUnit]) -> Written:
        """The units appended, in place; returns the list."""
        with self._lock:
            for unit in units:
                self._position[unit.id] = len(self._slots)
                self._slots.append(unit)
        return self

    def without(self, units: Sequence[MemoryUnit]) -> Written | None:
        """The units taken out, in place; None when it should be built again instead."""
        with self._lock:
            for unit in units:
                index = self._position.pop(unit.id, None)
                if index is not None:  # else written after the list last grew
                    self._slots[index] = None
            return self if 2 * len(self._position) >= len(self._slots) else None

    def units(self) -> list[MemoryUnit]:
        """The units now, oldest first (a new list)."""
        with self._lock:
            return [u for u in self._slots if u is not None]


def _constraints(store: MemoryStore, namespace: str) -> tuple[Constraints, dict[str, str]]:
    """The namespace's standing facts and which newer change supersedes each older one."""
    index = standing_constraints(store, namespace)
    return index, index.superseding(lambda ids: store.embeddings(namespace, ids))


def namespace_rows(store: MemoryStore, namespaces: list[str]) -> list[NamespaceRow]:
    """Counts and the last change of each namespace."""
    rows = []
    for name in namespaces:
        index, superseded = _constraints(store, name)
        items = store.items(name)
        changes = [i.updated_at for i in items]
        latest = store.latest_time(name)
        if latest is not None:
            changes.append(latest)
        rows.append(
            NamespaceRow(
                name=name_of(name),
                memories=store.count_units(name),
                standing=len(index.units) - len(superseded),
                items=len(items),
                last_change=max((_naive(c) for c in changes), default=None),
            )
        )
    return rows


def _naive(moment: datetime) -> datetime:
    """Memory times are naive UTC; item times carry their zone."""
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


def _rows(
    store: MemoryStore, namespace: str, units: list[MemoryUnit], superseded: dict[str, str]
) -> list[Row]:
    keys = store.item_keys(namespace, [u.id for u in units])
    return [Row(u, keys.get(u.id), standing_fact(u), superseded.get(u.id)) for u in units]


def _within(unit: MemoryUnit, since: date | None, until: date | None) -> bool:
    moment = unit.time.start if unit.time else unit.provenance.session_time
    if moment is None:
        return since is None and until is None
    day = moment.date()
    return (since is None or day >= since) and (until is None or day <= until)


def listing(store: MemoryStore, namespace: str, filters: Filters) -> Listing:
    """The page of ``namespace``'s memories ``filters`` asks for, newest first, and speakers."""
    units = written(store, namespace)
    people, _ = store.vocabulary(namespace)
    speakers = sorted({u.provenance.speaker for u in units if u.provenance.speaker})
    start = (filters.page - 1) * PAGE
    if filters.kind == "root":
        roots = store.root_units(namespace)
        return Listing(
            [], roots[start : start + PAGE], len(roots), filters.page, _pages(len(roots)),
            speakers, people[:40],
        )  # fmt: skip
    index, superseded = _constraints(store, namespace)
    chosen = units
    if filters.kind in ("item", "turn"):
        from_items = {u for item in store.items(namespace) for u in item.unit_ids}
        chosen = [u for u in chosen if (u.id in from_items) == (filters.kind == "item")]
    elif filters.kind == "standing":
        standing = {u.id for u in index.units}
        chosen = [u for u in chosen if u.id in standing]
    speaker = normalise_cue(filters.speaker)
    chosen = [
        u
        for u in reversed(chosen)
        if (not speaker or normalise_cue(u.provenance.speaker or "") == speaker)
        and (not filters.session or u.provenance.session_id == filters.session)
        and _within(u, filters.since, filters.until)
    ]
    page = chosen[start : start + PAGE]
    return Listing(
        _rows(store, namespace, page, superseded), [], len(chosen), filters.page,
        _pages(len(chosen)), speakers, people[:40],
    )  # fmt: skip


def _pages(total: int) -> int:
    return max(1, -(-total // PAGE))


def memory_view(store: MemoryStore, namespace: str, memory_id: str) -> MemoryView | None:
    """One memory with everything the browser says about it (None: no such memory)."""
    unit = store.get(namespace, [memory_id]).get(memory_id)
    if unit is None:
        return None
    _, superseded = _constraints(store, namespace)
    (row,) = _rows(store, namespace, [unit], superseded)
    edges = store.neighbours(namespace, [memory_id], (*LINK_TYPES, *CAUSAL_TYPES))
    older_ids = [old for old, new in superseded.items() if new == memory_id]
    ends = store.get(namespace, [e.dst for e in edges] + older_ids + [row.superseded_by or ""])
    older = [ends[old] for old in older_ids if old in ends]
    return MemoryView(
        row=row,
        supersedes=older,
        superseding=ends.get(row.superseded_by) if row.superseded_by else None,
        neighbours=[Neighbour(e.type, e.weight, ends[e.dst]) for e in edges if e.dst in ends],
        roots=[r for r in store.root_units(namespace) if memory_id in r.evidence_ids],
    )


def person_view(store: MemoryStore, namespace: str, person: str) -> PersonView:
    """The person's standing facts by topic (superseded ones marked) and their root units."""
    name = normalise_cue(person)
    index, superseded = _constraints(store, namespace)
    theirs = [
        u
        for u in index.units
        if name in {normalise_cue(p) for p in u.people}
        or normalise_cue(u.provenance.speaker or "") == name
    ]
    facts: dict[str, list[Row]] = defaultdict(list)
    for row in _rows(store, namespace, theirs, superseded):
        facts[row.standing.kind if row.standing else "other"].append(row)
    roots: dict[str, list[RootUnit]] = defaultdict(list)
    for root in store.root_units(namespace):
        if normalise_cue(root.person) == name:
            roots[root.topic].append(root)
    return PersonView(name=person, facts=dict(sorted(facts.items())), roots=dict(roots))
