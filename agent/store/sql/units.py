"""Units, their cue entries and provenance, and the marks of those waiting to be linked."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from functools import cache
from typing import Any, TypeVar

from pydantic import BaseModel
from typing_extensions import override

from ripplegraph.agent.memory import MemoryKind, MemoryUnit, Provenance, TimeInterval
from ripplegraph.agent.memory.text import normalise_cue
from ripplegraph.agent.store.cue_index import epoch
from ripplegraph.agent.store.derived import Changes
from ripplegraph.agent.store.sql.database import (
    REMOVALS,
    SQLDatabase,
    changed,
    chunks,
    last_seq,
)

UNIT_CACHE_LIMIT = 200_000
"""Parsed units kept, the least recently read dropped first.  Each derived value of a namespace
is built from every unit, one value at a time, so a bound under a namespace's size would parse
it once per value on a cold start (at 100,000 units a first recall took 36 s keeping 20,000,
against 20 s keeping all)."""


def from_epoch(seconds: float) -> datetime:
    """A naive UTC time from the seconds a time cue is stored as."""
    return datetime.fromtimestamp(seconds, tz=UTC).replace(tzinfo=None)


_Model = TypeVar("_Model", bound=BaseModel)


@cache
def _every_field(model: type[BaseModel]) -> set[str]:
    return set(model.model_fields)


def _made(model: type[_Model], **values: Any) -> _Model:
    """A model of a stored row: every field given, nothing validated again.

    A namespace's units are kept parsed, so a unit's bytes are paid per memory: a validated
    model carries its own set of the fields it was given (half a kilobyte for a unit), these
    share one that names them all, so setting a field adds nothing to it.  The row was
    validated when it was written.
    """
    return model.model_construct(_every_field(model), **values)


class UnitTables(SQLDatabase):
    """Units by id, by session, by person and in write order."""

    @override
    def existing(self, ids: Iterable[str], namespace: str | None = None) -> set[str]:
        wanted = list(dict.fromkeys(ids))
        found: set[str] = set()
        if namespace is not None:  # a unit read in this namespace is there (a forget evicts it)
            with self._unit_lock:
                found = {
                    m for m in wanted if (u := self._unit_cache.get(m)) and u.namespace == namespace
                }
            wanted = [mid for mid in wanted if mid not in found]
        for chunk, marks in chunks(wanted):
            if namespace is None:
                rows = self._rows(f"SELECT id FROM units WHERE id IN ({marks})", chunk)
            else:
                rows = self._rows(
                    f"SELECT id FROM units WHERE {self._in_namespace} AND id IN ({marks})",
                    [namespace, *chunk],
                )
            found.update(str(r[0]) for r in rows)
        return found

    @override
    def insert_units(self, units: Sequence[MemoryUnit]) -> None:
        """Insert units and their cue entries in one transaction (ids must be new)."""
        if not units:
            return
        with self.transaction() as db:
            last = {}
            for namespace in dict.fromkeys(u.namespace for u in units):
                changed(db, namespace, register=True)
                last[namespace] = last_seq(db, namespace)
            for unit in units:
                last[unit.namespace] += 1
                db.execute(
                    "INSERT INTO units VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        unit.id,
                        unit.namespace,
                        last[unit.namespace],
                        unit.text,
                        unit.kind.value,
                        json.dumps(unit.people),
                        json.dumps(unit.places),
                        epoch(unit.time.start) if unit.time else None,
                        epoch(unit.time.end) if unit.time else None,
                        unit.provenance.session_id,
                        json.dumps(unit.provenance.turn_ids),
                        unit.provenance.speaker,
                        unit.provenance.session_time.isoformat()
                        if unit.provenance.session_time
                        else None,
                    ),
                )
                cue_rows = {("person", normalise_cue(p)) for p in unit.people} | {
                    ("place", normalise_cue(p)) for p in unit.places
                }
                db.executemany(
                    "INSERT INTO cues VALUES (?,?,?,?) ON CONFLICT DO NOTHING",
                    [(unit.namespace, kind, value, unit.id) for kind, value in cue_rows if value],
                )
                db.execute("INSERT INTO pending_links VALUES (?, ?)", (unit.id, unit.namespace))

    _UNIT_COLUMNS = (
        "id, namespace, text, kind, people, places, t_start, t_end, session_id, turn_ids, "
        "speaker, session_time"
    )

    @staticmethod
    def _unit(row: tuple[Any, ...]) -> MemoryUnit:
        """The unit a row holds, made without validating it again (``_made``).

        Its names are interned (a namespace repeats a few people and places across all its
        units) and its sequences are tuples of strings, which the garbage collector stops
        tracking: a full collection walks every parsed unit the store keeps.
        """
        (mid, ns, text, kind, people, places, t0, t1, session, turns, speaker, stime) = row
        return _made(
            MemoryUnit,
            id=str(mid),
            namespace=sys.intern(str(ns)),
            text=str(text),
            kind=MemoryKind(str(kind)),
            people=tuple(map(sys.intern, json.loads(str(people)))),
            places=tuple(map(sys.intern, json.loads(str(places)))),
            time=_made(TimeInterval, start=from_epoch(float(t0)), end=from_epoch(float(t1)))
            if t0 is not None
            else None,
            provenance=_made(
                Provenance,
                session_id=sys.intern(str(session)),
                turn_ids=tuple(json.loads(str(turns))),
                speaker=sys.intern(str(speaker)) if speaker is not None else None,
                session_time=datetime.fromisoformat(str(stime)) if stime else None,
            ),
        )

    @override
    def units(self, namespace: str, ids: Iterable[str]) -> dict[str, MemoryUnit]:
        """Units by id, restricted to ``namespace`` (cached: a unit never changes in place)."""
        found: dict[str, MemoryUnit] = {}
        wanted = []
        with self._unit_lock:
            for mid in dict.fromkeys(ids):
                cached = self._unit_cache.get(mid)
                if cached is None:
                    wanted.append(mid)
                elif cached.namespace == namespace:
                    self._unit_cache.move_to_end(mid)
                    found[mid] = cached
        for chunk, marks in chunks(wanted):
            for row in self._rows(
                f"SELECT {self._UNIT_COLUMNS} FROM units "
                f"WHERE {self._in_namespace} AND id IN ({marks})",
                [namespace, *chunk],
            ):
                unit = self._unit(row)
                found[unit.id] = unit
                self._remember(unit)
        return found

    def _remember(self, unit: MemoryUnit) -> None:
        with self._unit_lock:
            self._unit_cache[unit.id] = unit
            if len(self._unit_cache) > UNIT_CACHE_LIMIT:
                self._unit_cache.popitem(last=False)

    def _in_order(self, rows: Sequence[tuple[Any, ...]]) -> list[MemoryUnit]:
        """Units from whole rows, in the rows' order: the kept object where there is one.

        A namespace read whole is read in write order in one statement.  Looked up by id in
        chunks, 100,000 units took 0.5 s, and their objects, made in id order, made every
        later pass in write order about twice as slow (the memory browser's page).
        """
        with self._unit_lock:
            kept = [self._unit_cache.get(str(row[0])) for row in rows]
        units = []
        for row, unit in zip(rows, kept, strict=True):
            if unit is None:
                unit = self._unit(row)
                self._remember(unit)
            units.append(unit)
        return units

    @override
    def all_units(self, namespace: str) -> list[MemoryUnit]:
        """Every unit of the namespace in write order (parsed once, then from the cache)."""
        return self._in_order(
            self._rows(
                f"SELECT {self._UNIT_COLUMNS} FROM units WHERE namespace = ? ORDER BY seq",
                (namespace,),
            )
        )

    @override
    def units_since(self, namespace: str, seq: int) -> Changes:
        with self.snapshot() as db:  # the units and the count agree
            rows = db.execute(
                f"SELECT seq, {self._UNIT_COLUMNS} FROM units "
                "WHERE namespace = ? AND seq > ? ORDER BY seq",
                (namespace, seq),
            ).fetchall()
            removed = db.execute(
                "SELECT value FROM meta WHERE key = ?", (REMOVALS + namespace,)
            ).fetchone()
        units = self._in_order([row[1:] for row in rows])
        return Changes(
            units=[(int(row[0]), unit) for row, unit in zip(rows, units, strict=True)],
            removals=int(removed[0]) if removed else 0,
        )

    @override
    def deletion_mark(self, namespace: str) -> tuple[int, int]:
        with self.snapshot() as db:
            removed = db.execute(
                "SELECT value FROM meta WHERE key = ?", (REMOVALS + namespace,)
            ).fetchone()
            return (int(removed[0]) if removed else 0), last_seq(db, namespace)

    @override
    def count_units(self, namespace: str) -> int:
        rows = self._rows("SELECT COUNT(*) FROM units WHERE namespace = ?", (namespace,))
        return int(rows[0][0])

    @override
    def unit_ids(self, namespace: str) -> set[str]:
        rows = self._rows("SELECT id FROM units WHERE namespace = ?", (namespace,))
        return {str(r[0]) for r in rows}

    @override
    def pending_links(self, namespace: str) -> list[str]:
        rows = self._rows(
            "SELECT p.unit_id FROM pending_links p JOIN units u ON u.id = p.unit_id "
            "WHERE p.namespace = ? ORDER BY u.seq",
            (namespace,),
        )
        return [str(r[0]) for r in rows]

    @override
    def mark_linked(self, ids: Iterable[str]) -> None:
        with self.transaction() as db:
            db.executemany("DELETE FROM pending_links WHERE unit_id = ?", [(i,) for i in ids])

    @override
    def covered_turns(self, namespace: str, session_id: str) -> set[str]:
        rows = self._rows(
            "SELECT turn_ids FROM units WHERE namespace = ? AND session_id = ?",
            (namespace, session_id),
        )
        return {str(t) for (turns,) in rows for t in json.loads(str(turns))}

    @override
    def ids_by_session(self, namespace: str, session_id: str) -> list[str]:
        """Units whose provenance is the given session."""
        rows = self._rows(
            "SELECT id FROM units WHERE namespace = ? AND session_id = ? ORDER BY seq",
            (namespace, session_id),
        )
        return [str(r[0]) for r in rows]

    @override
    def ids_by_person(self, namespace: str, person: str) -> list[str]:
        """Units that name the person as a cue or were said by them."""
        key = normalise_cue(person)
        named = {
            str(r[0])
            for r in self._rows(
                "SELECT unit_id FROM cues WHERE namespace = ? AND kind = 'person' AND value = ?",
                (namespace, key),
            )
        }
        rows = self._rows(
            "SELECT id, speaker FROM units WHERE namespace = ? ORDER BY seq", (namespace,)
        )
        return [
            str(mid)
            for mid, speaker in rows
            if str(mid) in named or (speaker is not None and normalise_cue(str(speaker)) == key)
        ]
