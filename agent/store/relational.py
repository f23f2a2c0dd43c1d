"""The relational half of the store: units' cues, the cue indexes and the typed edges, in SQLite.

SQLite is the source of truth for which memories exist: a vector Chroma returns is only
visible once its unit row is committed here, so a crash between the two writes never shows
a half-written memory (re-running the ingest upserts the vector again and commits the row).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from agent.memory import MemoryKind, MemoryUnit, Provenance, RootUnit, TimeInterval
from agent.store.cue_index import epoch
from agent.store.derived import Changes
from agent.store.edges import Edge, EdgeType, Pairs, WeightedPairs, reverse
from agent.text import normalise_cue

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS namespaces (
    namespace TEXT PRIMARY KEY,
    generation INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS units (
    id TEXT PRIMARY KEY,
    namespace TEXT NOT NULL,
    seq INTEGER NOT NULL,
    text TEXT NOT NULL,
    kind TEXT NOT NULL,
    people TEXT NOT NULL,
    places TEXT NOT NULL,
    t_start REAL,
    t_end REAL,
    session_id TEXT NOT NULL,
    turn_ids TEXT NOT NULL,
    speaker TEXT,
    session_time TEXT
);
CREATE INDEX IF NOT EXISTS units_by_namespace ON units (namespace, seq);
DROP INDEX IF EXISTS units_by_time;  -- no query uses it: time matching is the cue index's
CREATE TABLE IF NOT EXISTS cues (
    namespace TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('person', 'place')),
    value TEXT NOT NULL,
    unit_id TEXT NOT NULL REFERENCES units (id),
    PRIMARY KEY (namespace, kind, value, unit_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS cues_by_unit ON cues (unit_id);
CREATE TABLE IF NOT EXISTS edges (
    namespace TEXT NOT NULL,
    src TEXT NOT NULL REFERENCES units (id),
    dst TEXT NOT NULL REFERENCES units (id),
    type TEXT NOT NULL,
    weight REAL NOT NULL,
    PRIMARY KEY (src, type, dst)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS edges_by_namespace ON edges (namespace, type);
CREATE INDEX IF NOT EXISTS edges_by_dst ON edges (dst);
CREATE TABLE IF NOT EXISTS pending_links (
    unit_id TEXT PRIMARY KEY REFERENCES units (id),
    namespace TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pending_roots (
    unit_id TEXT PRIMARY KEY REFERENCES units (id),
    namespace TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS root_units (
    namespace TEXT NOT NULL,
    id TEXT NOT NULL,
    person TEXT NOT NULL,
    topic TEXT NOT NULL,
    rule TEXT NOT NULL,
    evidence TEXT NOT NULL,
    stale INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (namespace, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS clusters (
    namespace TEXT NOT NULL,
    id INTEGER NOT NULL,
    centroid BLOB NOT NULL,
    size INTEGER NOT NULL,
    PRIMARY KEY (namespace, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS cluster_members (
    unit_id TEXT PRIMARY KEY REFERENCES units (id),
    namespace TEXT NOT NULL,
    cluster_id INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS cluster_members_by_cluster ON cluster_members (namespace, cluster_id);
"""


# The kinds of broken row ``dangling`` counts and ``repair_references`` deletes: the table
# holding the row and the condition that finds it.
_MISSING_UNIT = "NOT EXISTS (SELECT 1 FROM units u WHERE u.id = {table}.unit_id)"
_BROKEN: dict[str, tuple[str, str]] = {
    "edges to missing units": (
        "edges",
        "NOT EXISTS (SELECT 1 FROM units u WHERE u.id = edges.src) "
        "OR NOT EXISTS (SELECT 1 FROM units u WHERE u.id = edges.dst)",
    ),
    "edges across namespaces": (
        "edges",
        "EXISTS (SELECT 1 FROM units u WHERE u.id IN (edges.src, edges.dst) "
        "AND u.namespace != edges.namespace)",
    ),
    "edges stored one way only": (
        "edges",
        "NOT EXISTS (SELECT 1 FROM edges r WHERE r.src = edges.dst AND r.dst = edges.src "
        "AND r.type = CASE edges.type WHEN 'causal' THEN 'caused_by' "
        "WHEN 'caused_by' THEN 'causal' ELSE edges.type END)",
    ),
    "cue entries of missing units": (
        "cues",
        "NOT EXISTS (SELECT 1 FROM units u WHERE u.id = cues.unit_id "
        "AND u.namespace = cues.namespace)",
    ),
    **{
        f"{label} of missing units": (table, _MISSING_UNIT.format(table=table))
        for label, table in (
            ("pending links", "pending_links"),
            ("pending roots", "pending_roots"),
            ("cluster members", "cluster_members"),
        )
    },
    "root units citing missing units": (
        "root_units",
        "EXISTS (SELECT 1 FROM json_each(root_units.evidence) j WHERE NOT EXISTS "
        "(SELECT 1 FROM units u WHERE u.id = j.value AND u.namespace = root_units.namespace))",
    ),
    "root units without evidence": ("root_units", "json_array_length(evidence) = 0"),
}
# Counted too, but repaired by registering the namespace: the units themselves are sound.
_UNREGISTERED = (
    "units of unregistered namespaces",
    "SELECT COUNT(*) FROM units WHERE NOT EXISTS "
    "(SELECT 1 FROM namespaces n WHERE n.namespace = units.namespace)",
)

_UNIT_CACHE_LIMIT = 200_000
_REMOVALS = "removals:"  # meta key prefix: unit deletions per namespace, never reset
_log = logging.getLogger(__name__)


_CHUNK = 500  # ids per statement, well under SQLite's limit on bound parameters


def _chunks(ids: Sequence[str]) -> Iterator[tuple[list[str], str]]:
    """``ids`` in slices that fit one statement, each with its ``?,?,…`` placeholders."""
    for start in range(0, len(ids), _CHUNK):
        chunk = list(ids[start : start + _CHUNK])
        yield chunk, ",".join("?" * len(chunk))


def _changed(db: sqlite3.Connection, namespace: str | None, *, register: bool = False) -> None:
    """Bump the write generation of ``namespace`` (of every one when None) in ``db``.

    ``register`` also records a namespace seen for the first time.
    """
    if namespace is None:
        db.execute("UPDATE namespaces SET generation = generation + 1")
    elif register:
        db.execute(
            "INSERT INTO namespaces (namespace, generation) VALUES (?, 1) "
            "ON CONFLICT (namespace) DO UPDATE SET generation = generation + 1",
            (namespace,),
        )
    else:
        db.execute(
            "UPDATE namespaces SET generation = generation + 1 WHERE namespace = ?", (namespace,)
        )


def _from_epoch(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC).replace(tzinfo=None)


class RelationalStore:
    """SQLite file with WAL journaling; one connection shared under a lock."""

    def __init__(self, path: Path) -> None:
        self._lock = threading.RLock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.execute("PRAGMA busy_timeout=30000")
        self._db.execute("PRAGMA secure_delete=ON")  # a deleted row's bytes are zeroed
        self._db.executescript(_SCHEMA)
        self._unit_cache: dict[str, MemoryUnit] = {}

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()

    def scrub(self) -> None:
        """Fold the write-ahead log into the file and truncate it (after a forget).

        With ``secure_delete`` the file's deleted cells are already zeros; the log still holds
        the pages as they were written until this checkpoint empties it.
        """
        with self._lock:
            busy = self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        if busy:
            _log.warning(
                "another process kept reading graph.sqlite: its write-ahead log keeps the "
                "forgotten rows' pages until the next checkpoint"
            )

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One atomic write: everything inside commits together or not at all."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    # --- meta ------------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        """A store-wide setting (e.g. the embedding model it was built with)."""
        rows = self._rows("SELECT value FROM meta WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else None

    def set_meta(self, key: str, value: str) -> None:
        """Record a store-wide setting."""
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def generation(self, namespace: str) -> int:
        """A counter bumped by every write to the namespace (invalidates derived indexes)."""
        rows = self._rows("SELECT generation FROM namespaces WHERE namespace = ?", (namespace,))
        return int(rows[0][0]) if rows else 0

    # --- units -----------------------------------------------------------------------------

    def existing(self, ids: Iterable[str]) -> set[str]:
        """The subset of ``ids`` that are stored."""
        wanted = list(ids)
        found: set[str] = set()
        for chunk, marks in _chunks(wanted):
            found.update(
                str(r[0]) for r in self._rows(f"SELECT id FROM units WHERE id IN ({marks})", chunk)
            )
        return found

    def insert_units(self, units: Sequence[MemoryUnit]) -> None:
        """Insert units and their cue entries in one transaction (ids must be new)."""
        if not units:
            return
        with self.transaction() as db:
            namespaces = {u.namespace for u in units}
            for namespace in namespaces:
                _changed(db, namespace, register=True)
            (seq,) = db.execute("SELECT COALESCE(MAX(seq), 0) FROM units").fetchone()
            for offset, unit in enumerate(units, start=1):
                db.execute(
                    "INSERT INTO units VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        unit.id,
                        unit.namespace,
                        seq + offset,
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
                    "INSERT OR IGNORE INTO cues VALUES (?,?,?,?)",
                    [(unit.namespace, kind, value, unit.id) for kind, value in cue_rows if value],
                )
                db.execute("INSERT INTO pending_links VALUES (?, ?)", (unit.id, unit.namespace))

    _UNIT_COLUMNS = (
        "id, namespace, text, kind, people, places, t_start, t_end, session_id, turn_ids, "
        "speaker, session_time"
    )

    @staticmethod
    def _unit(row: tuple[Any, ...]) -> MemoryUnit:
        (mid, ns, text, kind, people, places, t0, t1, session, turns, speaker, stime) = row
        return MemoryUnit(
            id=str(mid),
            namespace=str(ns),
            text=str(text),
            kind=MemoryKind(str(kind)),
            people=json.loads(str(people)),
            places=json.loads(str(places)),
            time=TimeInterval(start=_from_epoch(float(t0)), end=_from_epoch(float(t1)))
            if t0 is not None
            else None,
            provenance=Provenance(
                session_id=str(session),
                turn_ids=json.loads(str(turns)),
                speaker=str(speaker) if speaker is not None else None,
                session_time=datetime.fromisoformat(str(stime)) if stime else None,
            ),
        )

    def units(self, namespace: str, ids: Iterable[str]) -> dict[str, MemoryUnit]:
        """Units by id, restricted to ``namespace`` (cached: a unit never changes in place)."""
        found: dict[str, MemoryUnit] = {}
        wanted = []
        for mid in dict.fromkeys(ids):
            cached = self._unit_cache.get(mid)
            if cached is None:
                wanted.append(mid)
            elif cached.namespace == namespace:
                found[mid] = cached
        for chunk, marks in _chunks(wanted):
            for row in self._rows(
                f"SELECT {self._UNIT_COLUMNS} FROM units WHERE namespace = ? AND id IN ({marks})",
                [namespace, *chunk],
            ):
                unit = self._unit(row)
                found[unit.id] = unit
                self._remember(unit)
        return found

    def _remember(self, unit: MemoryUnit) -> None:
        if len(self._unit_cache) > _UNIT_CACHE_LIMIT:
            self._unit_cache.clear()
        self._unit_cache[unit.id] = unit

    def all_units(self, namespace: str) -> list[MemoryUnit]:
        """Every unit of the namespace in write order (parsed once, then from the cache)."""
        ids = [
            str(mid)
            for (mid,) in self._rows(
                "SELECT id FROM units WHERE namespace = ? ORDER BY seq", (namespace,)
            )
        ]
        found = self.units(namespace, ids)
        return [found[mid] for mid in ids if mid in found]

    def units_since(self, namespace: str, seq: int) -> Changes:
        """Units written after write sequence ``seq``, and how many deletions the namespace saw.

        A derived value grows by these units while the deletion count is the one it last saw;
        a deletion (which may also free a sequence number for reuse) makes it rebuild.
        """
        with self._lock:  # one snapshot: the units and the count agree
            rows = self._db.execute(
                "SELECT seq, id FROM units WHERE namespace = ? AND seq > ? ORDER BY seq",
                (namespace, seq),
            ).fetchall()
            removed = self._db.execute(
                "SELECT value FROM meta WHERE key = ?", (_REMOVALS + namespace,)
            ).fetchone()
        found = self.units(namespace, [str(mid) for _, mid in rows])
        return Changes(
            units=[(int(n), found[str(mid)]) for n, mid in rows if str(mid) in found],
            removals=int(removed[0]) if removed else 0,
        )

    def count_units(self, namespace: str) -> int:
        """Units stored in the namespace."""
        rows = self._rows("SELECT COUNT(*) FROM units WHERE namespace = ?", (namespace,))
        return int(rows[0][0])

    # --- cue index -------------------------------------------------------------------------

    # --- pending links, forgetting ---------------------------------------------------------

    def pending_links(self, namespace: str) -> list[str]:
        """Units written but not linked yet (an ingest stopped between write and link)."""
        rows = self._rows(
            "SELECT p.unit_id FROM pending_links p JOIN units u ON u.id = p.unit_id "
            "WHERE p.namespace = ? ORDER BY u.seq",
            (namespace,),
        )
        return [str(r[0]) for r in rows]

    def mark_linked(self, ids: Iterable[str]) -> None:
        """The units' edges are committed: they no longer wait for linking."""
        with self.transaction() as db:
            db.executemany("DELETE FROM pending_links WHERE unit_id = ?", [(i,) for i in ids])

    def covered_turns(self, namespace: str, session_id: str) -> set[str]:
        """Turn ids of a session that stored memories already cite."""
        rows = self._rows(
            "SELECT turn_ids FROM units WHERE namespace = ? AND session_id = ?",
            (namespace, session_id),
        )
        return {str(t) for (turns,) in rows for t in json.loads(str(turns))}

    def ids_by_session(self, namespace: str, session_id: str) -> list[str]:
        """Units whose provenance is the given session."""
        rows = self._rows(
            "SELECT id FROM units WHERE namespace = ? AND session_id = ? ORDER BY seq",
            (namespace, session_id),
        )
        return [str(r[0]) for r in rows]

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

    @staticmethod
    def _count_removal(db: sqlite3.Connection, namespace: str) -> None:
        db.execute(
            "INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT (key) "
            "DO UPDATE SET value = CAST(value AS INTEGER) + 1",
            (_REMOVALS + namespace,),
        )

    def delete_units(self, namespace: str, ids: Iterable[str]) -> list[str]:
        """Delete units of ``namespace``, their cue entries and every edge touching them.

        One transaction: readers see all of it or none.  Returns the ids that were deleted.
        """
        wanted = list(dict.fromkeys(ids))
        deleted: list[str] = []
        with self.transaction() as db:
            for chunk, marks in _chunks(wanted):
                found = [
                    str(r[0])
                    for r in db.execute(
                        f"SELECT id FROM units WHERE namespace = ? AND id IN ({marks})",
                        [namespace, *chunk],
                    )
                ]
                if not found:
                    continue
                held = ",".join("?" * len(found))
                db.execute(f"DELETE FROM edges WHERE src IN ({held})", found)
                db.execute(f"DELETE FROM edges WHERE dst IN ({held})", found)
                db.execute(f"DELETE FROM cues WHERE unit_id IN ({held})", found)
                db.execute(f"DELETE FROM pending_links WHERE unit_id IN ({held})", found)
                db.execute(f"DELETE FROM pending_roots WHERE unit_id IN ({held})", found)
                db.execute(f"DELETE FROM cluster_members WHERE unit_id IN ({held})", found)
                db.execute(f"DELETE FROM units WHERE id IN ({held})", found)
                deleted += found
            if deleted:
                self._drop_root_evidence(db, namespace, set(deleted))
                self._count_removal(db, namespace)
                _changed(db, namespace)
        for mid in deleted:
            self._unit_cache.pop(mid, None)
        return deleted

    @staticmethod
    def _drop_root_evidence(db: sqlite3.Connection, namespace: str, gone: set[str]) -> None:
        """Take forgotten memories out of root units' evidence.

        A unit with no evidence left is deleted; one with some left is marked stale: it is not
        routed (its rules may restate what was forgotten) until consolidation rewrites it.
        """
        rows = db.execute(
            "SELECT id, evidence FROM root_units WHERE namespace = ?", (namespace,)
        ).fetchall()
        for root_id, evidence in rows:
            ids = json.loads(str(evidence))
            kept = [e for e in ids if e not in gone]
            if not kept:
                db.execute(
                    "DELETE FROM root_units WHERE namespace = ? AND id = ?", (namespace, root_id)
                )
            elif len(kept) < len(ids):
                db.execute(
                    "UPDATE root_units SET evidence = ?, stale = 1 WHERE namespace = ? AND id = ?",
                    (json.dumps(kept), namespace, root_id),
                )

    def drop_namespace(self, namespace: str) -> list[str]:
        """Delete every unit, cue entry and edge of the namespace; returns the unit ids."""
        with self.transaction() as db:
            ids = [
                str(r[0])
                for r in db.execute("SELECT id FROM units WHERE namespace = ?", (namespace,))
            ]
            db.execute("DELETE FROM edges WHERE namespace = ?", (namespace,))
            db.execute("DELETE FROM cues WHERE namespace = ?", (namespace,))
            db.execute("DELETE FROM pending_links WHERE namespace = ?", (namespace,))
            for table in ("pending_roots", "cluster_members", "clusters", "root_units"):
                db.execute(f"DELETE FROM {table} WHERE namespace = ?", (namespace,))
            db.execute("DELETE FROM units WHERE namespace = ?", (namespace,))
            self._count_removal(db, namespace)
            _changed(db, namespace)
        for mid in ids:
            self._unit_cache.pop(mid, None)
        return ids

    def copy_namespace(self, source: str, target: str, ids: dict[str, str]) -> None:
        """Copy units, cue entries and edges of ``source`` into ``target`` (may be ``source``).

        ``ids`` maps each source id to copy to its new id; edges are copied among those units.
        """
        with self.transaction() as db:
            db.execute("CREATE TEMP TABLE IF NOT EXISTS id_map (old TEXT PRIMARY KEY, new TEXT)")
            db.execute("DELETE FROM id_map")
            db.executemany("INSERT INTO id_map VALUES (?, ?)", list(ids.items()))
            (seq,) = db.execute("SELECT COALESCE(MAX(seq), 0) FROM units").fetchone()
            db.execute(
                "INSERT INTO units SELECT m.new, ?, u.seq + ?, u.text, u.kind, u.people, "
                "u.places, u.t_start, u.t_end, u.session_id, u.turn_ids, u.speaker, "
                "u.session_time FROM units u JOIN id_map m ON m.old = u.id "
                "WHERE u.namespace = ?",
                (target, seq, source),
            )
            db.execute(
                "INSERT INTO cues SELECT ?, c.kind, c.value, m.new FROM cues c "
                "JOIN id_map m ON m.old = c.unit_id WHERE c.namespace = ?",
                (target, source),
            )
            db.execute(
                "INSERT INTO edges SELECT ?, a.new, b.new, e.type, e.weight FROM edges e "
                "JOIN id_map a ON a.old = e.src JOIN id_map b ON b.old = e.dst "
                "WHERE e.namespace = ?",
                (target, source),
            )
            _changed(db, target, register=True)
            db.execute("DELETE FROM id_map")

    # --- edges -----------------------------------------------------------------------------

    def edges_touching(self, ids: Iterable[str], edge_type: EdgeType) -> list[Edge]:
        """Every edge of ``edge_type`` with an endpoint in ``ids`` (one row per direction)."""
        wanted = list(dict.fromkeys(ids))
        edges: list[Edge] = []
        for chunk, marks in _chunks(wanted):
            rows = self._rows(
                f"SELECT src, dst, type, weight FROM edges WHERE type = ? AND src IN ({marks})",
                [edge_type, *chunk],
            )
            edges += [Edge(str(a), str(b), str(t), float(w)) for a, b, t, w in rows]
        return edges

    def degrees(self, ids: Iterable[str], edge_type: EdgeType) -> dict[str, int]:
        """Number of ``edge_type`` edges at each node in ``ids``."""
        wanted = list(dict.fromkeys(ids))
        found = dict.fromkeys(wanted, 0)
        for chunk, marks in _chunks(wanted):
            for node, count in self._rows(
                f"SELECT src, COUNT(*) FROM edges WHERE type = ? AND src IN ({marks}) GROUP BY src",
                [edge_type, *chunk],
            ):
                found[str(node)] = int(count)
        return found

    def replace_edges(
        self,
        namespace: str,
        edge_type: EdgeType,
        remove: Pairs,
        add: WeightedPairs,
    ) -> None:
        """Drop and add edges of one type in one transaction, stored both ways.

        The way back has the same type, except for directed causal edges (``caused_by``).
        """
        back = reverse(edge_type)
        removals = [(a, b) for a, b in remove]
        additions = [(a, b, w) for a, b, w in add]
        if not removals and not additions:
            return
        with self.transaction() as db:
            db.executemany(
                "DELETE FROM edges WHERE type = ? "
                "AND ((src = ? AND dst = ?) OR (src = ? AND dst = ?))",
                [(edge_type, a, b, b, a) for a, b in removals]
                + [(back, a, b, b, a) for a, b in removals],
            )
            db.executemany(
                "INSERT OR REPLACE INTO edges VALUES (?,?,?,?,?)",
                [(namespace, a, b, edge_type, w) for a, b, w in additions]
                + [(namespace, b, a, back, w) for a, b, w in additions],
            )
            _changed(db, namespace)

    def neighbours(
        self, namespace: str, ids: Iterable[str], edge_types: Iterable[str]
    ) -> list[Edge]:
        """Edges leaving ``ids`` whose type is one of ``edge_types``, strongest first."""
        wanted = list(dict.fromkeys(ids))
        types = list(edge_types)
        if not wanted or not types:
            return []
        edges: list[Edge] = []
        type_marks = ",".join("?" * len(types))
        for chunk, marks in _chunks(wanted):
            rows = self._rows(
                "SELECT src, dst, type, weight FROM edges WHERE namespace = ? "
                f"AND type IN ({type_marks}) AND src IN ({marks}) ORDER BY weight DESC, dst",
                [namespace, *types, *chunk],
            )
            edges += [Edge(str(a), str(b), str(t), float(w)) for a, b, t, w in rows]
        return edges

    def edges(self, namespace: str) -> set[Edge]:
        """Every edge of the namespace, one per stored direction."""
        rows = self._rows(
            "SELECT src, dst, type, weight FROM edges WHERE namespace = ?", (namespace,)
        )
        return {Edge(str(a), str(b), str(t), float(w)) for a, b, t, w in rows}

    def count_edges(self, namespace: str) -> dict[str, int]:
        """Undirected edges in the namespace, by type."""
        rows = self._rows(
            "SELECT type, COUNT(*) / 2 FROM edges WHERE namespace = ? GROUP BY type ORDER BY type",
            (namespace,),
        )
        return {str(t): int(n) for t, n in rows}

    # --- consistency -----------------------------------------------------------------------

    def namespaces(self) -> list[str]:
        """Every namespace that ever held a unit (a dropped one stays with no units).

        Units of a namespace missing from the registry (a damaged store) count too, so that
        ``check --repair`` never takes their vectors for a stray collection.
        """
        rows = self._rows("SELECT namespace FROM namespaces UNION SELECT namespace FROM units")
        return sorted(str(r[0]) for r in rows)

    def unit_ids(self, namespace: str) -> set[str]:
        """Ids of every unit in the namespace."""
        rows = self._rows("SELECT id FROM units WHERE namespace = ?", (namespace,))
        return {str(r[0]) for r in rows}

    def dangling(self) -> dict[str, int]:
        """Counts of every kind of broken reference; all zero in a consistent store."""
        counts = {
            name: int(self._rows(f"SELECT COUNT(*) FROM {table} WHERE {condition}")[0][0])
            for name, (table, condition) in _BROKEN.items()
        }
        name, sql = _UNREGISTERED
        return {**counts, name: int(self._rows(sql)[0][0])}

    def repair_references(self) -> None:
        """Remove what ``dangling`` counts, in one transaction; every generation moves on.

        Rows that reference missing units (or cross namespaces, or have lost their reverse
        edge) are deleted; forgotten evidence leaves root units as forgetting does; units of
        an unregistered namespace get their namespace registered, never deleted.
        """
        with self.transaction() as db:
            db.execute(
                "INSERT OR IGNORE INTO namespaces (namespace) SELECT DISTINCT namespace FROM units"
            )
            for namespace in [str(r[0]) for r in db.execute("SELECT namespace FROM namespaces")]:
                existing = {
                    str(r[0])
                    for r in db.execute("SELECT id FROM units WHERE namespace = ?", (namespace,))
                }
                evidence = {
                    str(e)
                    for (ev,) in db.execute(
                        "SELECT evidence FROM root_units WHERE namespace = ?", (namespace,)
                    )
                    for e in json.loads(str(ev))
                }
                self._drop_root_evidence(db, namespace, evidence - existing)
            for table, condition in _BROKEN.values():
                db.execute(f"DELETE FROM {table} WHERE {condition}")
            _changed(db, None)

    # --- root units, clusters --------------------------------------------------------------

    def root_units(self, namespace: str) -> list[tuple[RootUnit, bool]]:
        """Consolidated root units of the namespace, each with whether it is stale, by id."""
        rows = self._rows(
            "SELECT id, person, topic, rule, evidence, stale FROM root_units "
            "WHERE namespace = ? ORDER BY id",
            (namespace,),
        )
        return [
            (
                RootUnit(
                    id=str(i),
                    person=str(p),
                    topic=str(t),
                    rule=str(r),
                    evidence_ids=json.loads(str(e)),
                ),
                bool(s),
            )
            for i, p, t, r, e, s in rows
        ]

    def replace_root_units(self, namespace: str, units: Sequence[RootUnit]) -> None:
        """Store the namespace's new root-unit set (evidence must name stored units)."""
        with self.transaction() as db:
            db.execute("DELETE FROM root_units WHERE namespace = ?", (namespace,))
            db.executemany(
                "INSERT INTO root_units VALUES (?,?,?,?,?,?,0)",
                [
                    (namespace, u.id, u.person, u.topic, u.rule, json.dumps(u.evidence_ids))
                    for u in units
                ],
            )  # fmt: skip
            _changed(db, namespace)

    def add_pending_roots(self, namespace: str, ids: Iterable[str]) -> None:
        """Memories waiting for the next root consolidation batch."""
        with self.transaction() as db:
            db.executemany(
                "INSERT OR IGNORE INTO pending_roots VALUES (?, ?)",
                [(i, namespace) for i in ids],
            )

    def pending_roots(self, namespace: str) -> list[str]:
        """Memories not consolidated into root units yet, in write order."""
        rows = self._rows(
            "SELECT p.unit_id FROM pending_roots p JOIN units u ON u.id = p.unit_id "
            "WHERE p.namespace = ? ORDER BY u.seq",
            (namespace,),
        )
        return [str(r[0]) for r in rows]

    def clear_pending_roots(self, ids: Iterable[str]) -> None:
        """These memories are consolidated."""
        with self.transaction() as db:
            db.executemany("DELETE FROM pending_roots WHERE unit_id = ?", [(i,) for i in ids])

    def clusters(self, namespace: str) -> dict[int, tuple[np.ndarray, int]]:
        """Fact clusters of the namespace: id → (centroid sum, size)."""
        rows = self._rows(
            "SELECT id, centroid, size FROM clusters WHERE namespace = ?", (namespace,)
        )
        return {
            int(i): (np.frombuffer(bytes(c), dtype=np.float32).copy(), int(n)) for i, c, n in rows
        }

    def assign_clusters(
        self, namespace: str, members: dict[str, int], clusters: dict[int, tuple[np.ndarray, int]]
    ) -> None:
        """Record new members and the updated clusters in one transaction."""
        with self.transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO clusters VALUES (?,?,?,?)",
                [
                    (namespace, cid, c.astype(np.float32).tobytes(), n)
                    for cid, (c, n) in clusters.items()
                ],
            )
            db.executemany(
                "INSERT OR REPLACE INTO cluster_members VALUES (?,?,?)",
                [(mid, namespace, cid) for mid, cid in members.items()],
            )

    def cluster_members(self, namespace: str, cluster_id: int) -> list[str]:
        """Ids in one cluster, in write order."""
        rows = self._rows(
            "SELECT m.unit_id FROM cluster_members m JOIN units u ON u.id = m.unit_id "
            "WHERE m.namespace = ? AND m.cluster_id = ? ORDER BY u.seq",
            (namespace, cluster_id),
        )
        return [str(r[0]) for r in rows]

    def clusters_of(self, ids: Iterable[str]) -> dict[str, set[int]]:
        """Cluster ids holding any of ``ids``, by namespace."""
        found: dict[str, set[int]] = {}
        wanted = list(ids)
        for chunk, marks in _chunks(wanted):
            for namespace, cid in self._rows(
                "SELECT DISTINCT namespace, cluster_id FROM cluster_members "
                f"WHERE unit_id IN ({marks})",
                chunk,
            ):
                found.setdefault(str(namespace), set()).add(int(cid))
        return found

    def reset_cluster(
        self, namespace: str, cluster_id: int, centroid: np.ndarray | None, size: int
    ) -> None:
        """Replace a cluster's centroid sum and size (``None`` deletes the cluster)."""
        with self.transaction() as db:
            if centroid is None:
                db.execute(
                    "DELETE FROM clusters WHERE namespace = ? AND id = ?", (namespace, cluster_id)
                )
            else:
                db.execute(
                    "INSERT OR REPLACE INTO clusters VALUES (?,?,?,?)",
                    (namespace, cluster_id, centroid.astype(np.float32).tobytes(), size),
                )
