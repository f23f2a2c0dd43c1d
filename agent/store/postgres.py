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
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import Any

from typing_extensions import override

from ripplegraph.agent.errors import PartUnavailable, StoreError
from ripplegraph.agent.store.sql import SQLTables
from ripplegraph.agent.store.sql.database import Rows, Tx
from ripplegraph.agent.store.sql.schema import POSTGRES, TABLES

_log = logging.getLogger(__name__)
WRITE_LOCK = 0x52_47_57_52  # "RGWR": the advisory lock every write transaction holds
WRITER_LOCK = 0x52_47_57_53  # the session lock of a multi-step write (on its own connection)
WRITE_LOCK_SQL = f"SELECT pg_advisory_xact_lock({WRITE_LOCK})"
REPEATABLE_READ_SQL = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"


class AdvisoryLock:
    """A session-level advisory lock on a connection of its own, re-entrant within a process.

    Its own connection, so that the write transactions it guards (on the main connection,
    under ``WRITE_LOCK``) never wait on it; opened at the first write, so a process that only
    reads holds one connection.  A connection the server dropped took the lock with it: the
    next write opens a new one.
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
                self._take()
            except BaseException as error:
                self._lock.release()
                raise _unavailable(error) from error
        self._depth += 1
        return self

    def _take(self) -> None:
        """Take the lock, on a new connection if the last one is dead (a restarted server)."""
        import psycopg

        for attempt in range(2):
            if self._connection is None or self._connection.broken:
                self._connection = self._connect()
            try:
                self._connection.execute("SELECT pg_advisory_lock(%s)", (WRITER_LOCK,))
                return
            except (psycopg.OperationalError, psycopg.InterfaceError):
                if attempt or not self._connection.broken:
                    raise

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        try:
            if self._depth == 0 and not self._connection.broken:
                self._connection.execute("SELECT pg_advisory_unlock(%s)", (WRITER_LOCK,))
        except Exception:  # the server went away: it released the lock with the session
            _log.warning("the database went away while its writer lock was held")
        finally:
            self._lock.release()

    def close(self) -> None:
        """Close its connection (the server drops the lock with it)."""
        if self._connection is not None:
            self._connection.close()


def _unavailable(error: BaseException) -> BaseException:
    """A lost connection as the store's one-line refusal; anything else as it was."""
    import psycopg

    if isinstance(error, psycopg.OperationalError | psycopg.InterfaceError):
        return PartUnavailable("the PostgreSQL database", error)
    return error


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
        self._url = url
        try:
            self._connected = psycopg.connect(url, autocommit=True)
        except psycopg.Error as error:
            raise StoreError(f"cannot connect to the database: {error}".strip()) from error
        self._writer = AdvisoryLock(lambda: psycopg.connect(url, autocommit=True))
        self._lock = threading.RLock()
        self._migrate()

    @property
    def _db(self) -> Any:
        """The connection, opened again when the server dropped the last one (a restart)."""
        if self._connected.broken:
            import psycopg

            try:
                self._connected = psycopg.connect(self._url, autocommit=True)
            except psycopg.Error as error:
                raise _unavailable(error) from error
        return self._connected

    @contextmanager
    def _reaching(self) -> Iterator[None]:
        """Statements on the connection; a lost server as ``PartUnavailable``."""
        try:
            yield
        except Exception as error:
            replaced = _unavailable(error)
            if replaced is error:
                raise
            raise replaced from error

    @override
    def close(self) -> None:
        with self._lock:
            self._connected.close()
            self._writer.close()

    @override
    def files(self) -> list[Path]:
        """The database's files under the server's data directory, where it runs here."""
        return database_files(self._url)

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
        """Rewrite every table without its dead rows, then checkpoint where allowed.

        The planner's statistics sample column values (ids, texts) into ``pg_statistic``:
        each table is analysed again from its live rows, and the catalog rewritten without
        the old samples (only a superuser may; otherwise PostgreSQL skips it with a warning).
        """
        with self._lock, self._reaching():
            for table in TABLES:
                self._db.execute(f"VACUUM (FULL, ANALYZE) {table}")
            self._db.execute("VACUUM FULL pg_statistic")
            try:
                self._db.execute("CHECKPOINT")
            except Exception as error:  # CHECKPOINT needs superuser or pg_checkpoint
                _log.warning("no checkpoint after compacting (%s): the log keeps old pages", error)
        return True

    @override
    @contextmanager
    def transaction(self) -> Iterator[Tx]:
        """A transaction that first waits for the store-wide write lock."""
        with self._lock, self._reaching(), self._begun(WRITE_LOCK_SQL) as db:
            yield _Transaction(db)

    @override
    @contextmanager
    def snapshot(self) -> Iterator[Tx]:
        """A repeatable-read transaction: every statement sees the same committed state."""
        with self._lock, self._reaching(), self._begun(REPEATABLE_READ_SQL) as db:
            yield _Transaction(db)

    @contextmanager
    def _begun(self, first: str) -> Iterator[Any]:
        """A transaction begun with ``first``, on a new connection if the last one is dead.

        A server that restarted leaves the old connection looking alive until it is used: a
        transaction whose first statement finds it dead starts again on a new one, so a
        long-running store goes on once the server is back, without one refused call.
        """
        import psycopg

        for attempt in range(2):
            stack = ExitStack()
            db = self._db
            try:
                stack.enter_context(db.transaction())
                db.execute(first)
                break
            except (psycopg.OperationalError, psycopg.InterfaceError):
                with suppress(Exception):
                    stack.close()
                if attempt or not db.broken:
                    raise
        with stack:
            yield db

    @override
    def _rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        import psycopg

        with self._lock, self._reaching():
            try:
                return list(self._db.execute(_native(sql), params).fetchall())
            except (psycopg.OperationalError, psycopg.InterfaceError):
                if not self._connected.broken:  # the server refused it, not a lost link
                    raise
            return list(self._db.execute(_native(sql), params).fetchall())  # reconnected


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
