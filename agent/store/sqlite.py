"""The relational side on one SQLite file: the embedded default.

One file in WAL mode, one connection shared under a lock.  ``secure_delete`` zeroes a deleted
row's bytes in the file as it is deleted, ``scrub`` empties the write-ahead log after a
forget, and ``compact`` (within the erasure window) rewrites the file, which removes the
copies page balancing left behind.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import FileLock
from typing_extensions import override

from ripplegraph.agent.paths import owner_only
from ripplegraph.agent.store.sql import SQLTables
from ripplegraph.agent.store.sql.database import Tx
from ripplegraph.agent.store.sql.schema import SQLITE

_log = logging.getLogger(__name__)


class SQLiteBackend(SQLTables):
    """Every aggregate's tables in ``graph.sqlite`` under the store directory."""

    dialect = SQLITE

    def __init__(self, path: Path) -> None:
        super().__init__()
        self._lock = threading.RLock()
        self._path = path
        self._writer = FileLock(str(path.with_name("write.lock")))
        # Its log and shared index take the file's permissions: all three are the owner's.
        self._db = sqlite3.connect(owner_only(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.execute("PRAGMA busy_timeout=30000")
        self._db.execute("PRAGMA secure_delete=ON")  # a deleted row's bytes are zeroed
        self._migrate()

    @override
    def close(self) -> None:
        with self._lock:
            self._db.close()

    @override
    def files(self) -> list[Path]:
        """``graph.sqlite`` and, while it is open, its write-ahead log and shared index."""
        named = [self._path, *(self._path.with_name(self._path.name + s) for s in ("-wal", "-shm"))]
        return [path for path in named if path.is_file()]

    @override
    def writer(self) -> FileLock:
        """A lock file beside ``graph.sqlite``: the writers of a store share its directory."""
        return self._writer

    @override
    def scrub(self) -> bool:
        """Fold the write-ahead log into the file and truncate it (after a forget).

        With ``secure_delete`` a deleted row's cells are zeros where they were, and the log
        holds the pages as they were written until this checkpoint empties it.  Copies remain
        that no delete reaches: when SQLite moves cells between pages to balance a b-tree, the
        bytes they left stay in the pages' unallocated space (a soak of 100 users found the
        ids of 95 forgotten memories there, in edge and cue index pages).  So ``compact`` is
        always owed after a forget.
        """
        with self._lock:
            busy = self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        if busy:
            _log.warning(
                "another process kept reading graph.sqlite: its write-ahead log keeps the "
                "forgotten rows' pages until the next compaction"
            )
        return False

    @override
    def compact(self) -> bool:
        """``VACUUM``: rewrite the file from its live rows, leaving no unallocated bytes."""
        with self._lock:
            self._db.execute("VACUUM")
            busy = self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        return not busy

    @override
    @contextmanager
    def transaction(self) -> Iterator[Tx]:
        """``BEGIN IMMEDIATE``: SQLite's one writer at a time, across processes."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    @override
    @contextmanager
    def snapshot(self) -> Iterator[Tx]:
        """A read transaction: in WAL mode it reads one snapshot while other writers go on."""
        with self._lock:
            self._db.execute("BEGIN")
            try:
                yield self._db
            finally:
                self._db.execute("COMMIT")

    @override
    def _rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, params).fetchall()
