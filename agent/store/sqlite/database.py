"""The SQLite connection the relational tables share, and the helpers every write uses.

One file in WAL mode, one connection shared under a lock; ``secure_delete`` zeroes a deleted
row's bytes in the file, and ``scrub`` empties the write-ahead log after a forget.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from typing_extensions import override

from agent.memory import MemoryUnit
from agent.store.backend import RelationalBackend

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

REMOVALS = "removals:"
"""Meta key prefix counting unit deletions per namespace (never reset)."""
_CHUNK = 500  # ids per statement, well under SQLite's limit on bound parameters
_log = logging.getLogger(__name__)


def chunks(ids: Sequence[str]) -> Iterator[tuple[list[str], str]]:
    """``ids`` in slices that fit one statement, each with its ``?,?,…`` placeholders."""
    for start in range(0, len(ids), _CHUNK):
        chunk = list(ids[start : start + _CHUNK])
        yield chunk, ",".join("?" * len(chunk))


def changed(db: sqlite3.Connection, namespace: str | None, *, register: bool = False) -> None:
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


def count_removal(db: sqlite3.Connection, namespace: str) -> None:
    """Count a deletion in ``namespace`` (what ``units_since`` reports as removals)."""
    db.execute(
        "INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT (key) "
        "DO UPDATE SET value = CAST(value AS INTEGER) + 1",
        (REMOVALS + namespace,),
    )


class SQLiteDatabase(RelationalBackend):
    """The connection, its lock, transactions and the store-wide settings."""

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

    @override
    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()

    @override
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

    def _evict(self, ids: Iterable[str]) -> None:
        """Drop deleted units from the parsed-unit cache."""
        for mid in ids:
            self._unit_cache.pop(mid, None)

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

    @override
    def meta(self, key: str) -> str | None:
        rows = self._rows("SELECT value FROM meta WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else None

    @override
    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    @override
    def generation(self, namespace: str) -> int:
        rows = self._rows("SELECT generation FROM namespaces WHERE namespace = ?", (namespace,))
        return int(rows[0][0]) if rows else 0
