"""What the relational tables share, whatever database holds them: transactions, helpers, meta.

The tables' SQL is written once, in the words SQLite and PostgreSQL both read (``ON
CONFLICT`` upserts, ``?`` placeholders that a backend rewrites); a backend supplies the
connection, how a write transaction is made exclusive, and its ``Dialect``.
"""

from __future__ import annotations

import threading
from abc import abstractmethod
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from typing_extensions import override

from ripplegraph.agent.memory import MemoryUnit
from ripplegraph.agent.store.backend import RelationalBackend
from ripplegraph.agent.store.sql.schema import META, MIGRATIONS, Dialect, statements


class Rows(Protocol):
    """What a statement returns: its rows."""

    def fetchall(self) -> list[Any]:
        """Every row."""
        ...

    def fetchone(self) -> Any:
        """The next row, or ``None``."""
        ...

    def __iter__(self) -> Iterator[Any]:
        """The rows one by one."""
        ...


class Tx(Protocol):
    """A write transaction's handle: statements with ``?`` placeholders."""

    def execute(self, sql: str, params: Sequence[Any] = (), /) -> Rows:
        """Run one statement."""
        ...

    def executemany(self, sql: str, params: Iterable[Sequence[Any]], /) -> object:
        """Run one statement once per parameter row."""
        ...


REMOVALS = "removals:"
"""Meta key prefix counting unit deletions per namespace (never reset)."""
_CHUNK = 500  # ids per statement, well under SQLite's limit on bound parameters


def chunks(ids: Sequence[str]) -> Iterator[tuple[list[str], str]]:
    """``ids`` in slices that fit one statement, each with its ``?,?,…`` placeholders."""
    for start in range(0, len(ids), _CHUNK):
        chunk = list(ids[start : start + _CHUNK])
        yield chunk, ",".join("?" * len(chunk))


def changed(db: Tx, namespace: str | None, *, register: bool = False) -> None:
    """Bump the write generation of ``namespace`` (of every one when None) in ``db``.

    ``register`` also records a namespace seen for the first time.
    """
    if namespace is None:
        db.execute("UPDATE namespaces SET generation = generation + 1")
    elif register:
        db.execute(
            "INSERT INTO namespaces (namespace, generation) VALUES (?, 1) "
            "ON CONFLICT (namespace) DO UPDATE SET generation = namespaces.generation + 1",
            (namespace,),
        )
    else:
        db.execute(
            "UPDATE namespaces SET generation = generation + 1 WHERE namespace = ?", (namespace,)
        )


def last_seq(db: Tx, namespace: str) -> int:
    """The write order of ``namespace``'s newest unit (0 when it has none), read in ``db``.

    Per namespace, from its index: every reader of the order follows one namespace, and a
    maximum over the whole table cost a scan of every user's units per write.
    """
    (seq,) = db.execute(
        "SELECT COALESCE(MAX(seq), 0) FROM units WHERE namespace = ?", (namespace,)
    ).fetchone()
    return int(seq)


def count_removal(db: Tx, namespace: str) -> None:
    """Count a deletion in ``namespace`` (what ``units_since`` reports as removals)."""
    db.execute(
        "INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT (key) "
        "DO UPDATE SET value = CAST(CAST(meta.value AS INTEGER) + 1 AS TEXT)",
        (REMOVALS + namespace,),
    )


class SQLDatabase(RelationalBackend):
    """The connection's shared behaviour: the parsed-unit cache, migrations, store settings."""

    dialect: Dialect

    def __init__(self) -> None:
        self._unit_cache: OrderedDict[str, MemoryUnit] = OrderedDict()
        self._unit_lock = threading.Lock()

    @abstractmethod
    def transaction(self) -> AbstractContextManager[Tx]:
        """One atomic write, exclusive among writers: it commits whole or not at all."""

    @abstractmethod
    def snapshot(self) -> AbstractContextManager[Tx]:
        """Reads that see one state of the store."""

    @abstractmethod
    def _rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """One read statement's rows."""

    def _migrate(self) -> None:
        """Bring the schema to the latest version, in one transaction."""
        with self.transaction() as db:
            db.execute(META)
            row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            version = int(row[0]) if row else 0
            for migration in range(version + 1, len(MIGRATIONS) + 1):
                for statement in statements(self.dialect, migration):
                    db.execute(statement)
            if version < len(MIGRATIONS):
                db.execute(
                    "INSERT INTO meta (key, value) VALUES ('schema_version', ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (str(len(MIGRATIONS)),),
                )

    @property
    def _in_namespace(self) -> str:
        """``namespace = ?`` as a filter only, for a lookup by ids within a namespace.

        Left to choose, SQLite reads such a lookup through the namespace's index once the ids
        are many (every unit of the namespace: 37 ms at 100,000 units for 300 ids, against 6
        by the ids' own key).
        """
        return self.dialect.filter_only.format(column="namespace") + " = ?"

    def _evict(self, ids: Iterable[str]) -> None:
        """Drop deleted units from the parsed-unit cache."""
        with self._unit_lock:
            for mid in ids:
                self._unit_cache.pop(mid, None)

    @override
    def meta(self, key: str) -> str | None:
        rows = self._rows("SELECT value FROM meta WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else None

    @override
    def tally(self, key: str, by: int) -> int:
        with self.transaction() as db:
            db.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) "
                "DO UPDATE SET value = CAST(CAST(meta.value AS INTEGER) + ? AS TEXT)",
                (key, str(by), by),
            )
            (value,) = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return int(value)

    @override
    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as db:
            db.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    @override
    def generation(self, namespace: str) -> int:
        rows = self._rows("SELECT generation FROM namespaces WHERE namespace = ?", (namespace,))
        return int(rows[0][0]) if rows else 0
