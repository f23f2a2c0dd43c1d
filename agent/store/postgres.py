"""The relational side on a PostgreSQL server, so several processes and machines share it.

Same tables and SQL as SQLite (``agent.store.sql``); what differs is here.  Writes are
transactions that first take one transaction-scoped advisory lock, so writers queue as they do
on SQLite's one-writer file, wherever they run; reads see one snapshot (repeatable read).  A
deleted row's bytes stay in its table's files until the compaction that follows a forget
(within the erasure window) runs ``VACUUM FULL``, which rewrites every table without them, and
a checkpoint where the role may make one.  What a client cannot reach stays the operator's:
the write-ahead log until its segments are recycled, WAL archives, replicas and backups.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from typing_extensions import override

from ripplegraph.agent.errors import StoreError
from ripplegraph.agent.store.sql import SQLTables
from ripplegraph.agent.store.sql.database import Rows, Tx
from ripplegraph.agent.store.sql.schema import POSTGRES, TABLES

_log = logging.getLogger(__name__)
WRITE_LOCK = 0x52_47_57_52  # "RGWR": the advisory lock every write transaction holds
WRITER_LOCK = 0x52_47_57_53  # the session lock of a multi-step write (on its own connection)


class AdvisoryLock:
    """A session-level advisory lock on a connection of its own, re-entrant within a process.

    Its own connection, so that the write transactions it guards (on the main connection,
    under ``WRITE_LOCK``) never wait on it; opened at the first write, so a process that only
    reads holds one connection.
    """

    def __init__(self, connect: Callable[[], Any]) -> None:
        self._connect = connect
        self._connection: Any = None
        self._lock = threading.RLock()
        self._depth = 0

    def __enter__(self) -> AdvisoryLock:
        self._lock.acquire()
        if self._depth == 0:
            try:
                if self._connection is None:
                    self._connection = self._connect()
                self._connection.execute("SELECT pg_advisory_lock(%s)", (WRITER_LOCK,))
            except BaseException:
                self._lock.release()
                raise
        self._depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        try:
            if self._depth == 0:
                self._connection.execute("SELECT pg_advisory_unlock(%s)", (WRITER_LOCK,))
        finally:
            self._lock.release()

    def close(self) -> None:
        """Close its connection (the server drops the lock with it)."""
        if self._connection is not None:
            self._connection.close()


def _native(sql: str) -> str:
    """The shared SQL's ``?`` placeholders as psycopg's ``%s``."""
    return sql.replace("?", "%s")


class _Transaction:
    """A transaction's handle over a psycopg connection, speaking the shared SQL."""

    def __init__(self, connection: Any) -> None:
        self._connection = connection

    def execute(self, sql: str, params: Sequence[Any] = (), /) -> Rows:
        return self._connection.execute(_native(sql), params)  # type: ignore[no-any-return]

    def executemany(self, sql: str, params: Iterable[Sequence[Any]], /) -> object:
        with self._connection.cursor() as cursor:
            cursor.executemany(_native(sql), list(params))
        return None


class PostgresBackend(SQLTables):
    """Every aggregate's tables in one PostgreSQL database (``postgresql://…``)."""

    dialect = POSTGRES

    def __init__(self, url: str) -> None:
        super().__init__()
        try:
            import psycopg
        except ImportError as error:  # the postgres extra is not installed
            raise StoreError(
                "a database URL needs psycopg: pip install 'ripplegraph[postgres]'"
            ) from error
        try:
            self._db = psycopg.connect(url, autocommit=True)
            self._writer = AdvisoryLock(lambda: psycopg.connect(url, autocommit=True))
        except psycopg.Error as error:
            raise StoreError(f"cannot connect to the database: {error}".strip()) from error
        self._lock = threading.RLock()
        self._migrate()

    @override
    def close(self) -> None:
        with self._lock:
            self._db.close()
            self._writer.close()

    @override
    def writer(self) -> AdvisoryLock:
        """A session advisory lock: writers on any machine that reach the server share it."""
        return self._writer

    @override
    def scrub(self) -> bool:
        """Nothing at a forget's own cost: dead rows stay in the table files until ``compact``."""
        return False

    @override
    def compact(self) -> bool:
        """Rewrite every table without its dead rows, then checkpoint where allowed."""
        with self._lock:
            for table in TABLES:
                self._db.execute(f"VACUUM FULL {table}")
            try:
                self._db.execute("CHECKPOINT")
            except Exception as error:  # CHECKPOINT needs superuser or pg_checkpoint
                _log.warning("no checkpoint after compacting (%s): the log keeps old pages", error)
        return True

    @override
    @contextmanager
    def transaction(self) -> Iterator[Tx]:
        """A transaction that first waits for the store-wide write lock."""
        with self._lock, self._db.transaction():
            self._db.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            yield _Transaction(self._db)

    @override
    @contextmanager
    def snapshot(self) -> Iterator[Tx]:
        """A repeatable-read transaction: every statement sees the same committed state."""
        with self._lock, self._db.transaction():
            self._db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            yield _Transaction(self._db)

    @override
    def _rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return list(self._db.execute(_native(sql), params).fetchall())


def database_files(url: str) -> list[Path]:
    """The files holding the database ``url`` names, after a checkpoint wrote them out.

    Its tables and indexes live under ``base/<oid>`` of the server's data directory (readable
    by a superuser on the server's machine, as a benchmark's or a test's cluster is); the
    write-ahead log (``pg_wal``) is left out: its segments are the operator's to recycle.
    Empty when the server does not say where its files are, or they are not on this machine.
    """
    import psycopg

    try:
        with psycopg.connect(url, autocommit=True) as db:
            db.execute("CHECKPOINT")
            (data,) = db.execute("SHOW data_directory").fetchone() or ("",)
            (oid,) = db.execute(
                "SELECT oid FROM pg_database WHERE datname = current_database()"
            ).fetchone() or (0,)
    except psycopg.Error as error:
        _log.warning("cannot list the database's files: %s", error)
        return []
    folder = Path(data) / "base" / str(oid)
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []
