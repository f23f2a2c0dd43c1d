"""Items a key-value client put: the value as given, and which units were made of it."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from typing_extensions import override

from ripplegraph.agent.memory import StoredItem
from ripplegraph.agent.store.sql.database import SQLDatabase, Tx, changed, chunks


def drop_items_of(db: Tx, ids: Sequence[str]) -> None:
    """Delete every item any of the units ``ids`` was made of (with all its links)."""
    for chunk, marks in chunks(list(ids)):
        keys = db.execute(
            f"SELECT DISTINCT namespace, key FROM item_units WHERE unit_id IN ({marks})", chunk
        ).fetchall()
        for namespace, key in keys:
            _delete(db, str(namespace), str(key))


def _delete(db: Tx, namespace: str, key: str) -> None:
    db.execute("DELETE FROM item_units WHERE namespace = ? AND key = ?", (namespace, key))
    db.execute("DELETE FROM items WHERE namespace = ? AND key = ?", (namespace, key))


_COLUMNS = "key, value, created_at, updated_at, ttl_minutes, expires_at"


def _moment(text: object) -> datetime:
    return datetime.fromisoformat(str(text))


def _expiry(seconds: object) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(float(str(seconds)), UTC)


class ItemTables(SQLDatabase):
    """The items and item_units tables."""

    @override
    def save_item(
        self,
        namespace: str,
        key: str,
        value: dict[str, Any],
        unit_ids: Sequence[str],
        created_at: datetime | None = None,
        ttl_minutes: float | None = None,
        expires_at: datetime | None = None,
    ) -> StoredItem:
        moment = datetime.now(UTC)
        now = moment.isoformat()
        if expires_at is None and ttl_minutes is not None:
            expires_at = moment + timedelta(minutes=ttl_minutes)
        expiry = expires_at.timestamp() if expires_at is not None else None
        with self.transaction() as db:
            row = db.execute(
                "SELECT created_at FROM items WHERE namespace = ? AND key = ?", (namespace, key)
            ).fetchone()
            created = created_at.isoformat() if created_at else str(row[0]) if row else now
            _delete(db, namespace, key)
            db.execute(  # the put this saves is done
                "DELETE FROM put_intents WHERE namespace = ? AND key = ?", (namespace, key)
            )
            db.execute(
                "INSERT INTO items (namespace, key, value, created_at, updated_at, ttl_minutes, "
                "expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    namespace,
                    key,
                    json.dumps(value, ensure_ascii=False),
                    created,
                    now,
                    ttl_minutes,
                    expiry,
                ),
            )
            db.executemany(
                "INSERT INTO item_units (namespace, key, unit_id) VALUES (?, ?, ?)",
                [(namespace, key, mid) for mid in dict.fromkeys(unit_ids)],
            )
            changed(db, namespace, register=True)
        return StoredItem(
            namespace=namespace,
            key=key,
            value=value,
            created_at=_moment(created),
            updated_at=_moment(now),
            unit_ids=list(dict.fromkeys(unit_ids)),
            ttl_minutes=ttl_minutes,
            expires_at=_expiry(expiry),
        )

    @override
    def items(self, namespace: str, keys: Iterable[str] | None = None) -> list[StoredItem]:
        wanted = None if keys is None else list(dict.fromkeys(keys))
        if wanted is None:
            rows = self._rows(
                f"SELECT {_COLUMNS} FROM items WHERE namespace = ? ORDER BY updated_at, key",
                (namespace,),
            )
            links = self._rows(
                "SELECT key, unit_id FROM item_units WHERE namespace = ?", (namespace,)
            )
        else:
            rows, links = [], []
            for chunk, marks in chunks(wanted):
                rows += self._rows(
                    f"SELECT {_COLUMNS} FROM items "
                    f"WHERE namespace = ? AND key IN ({marks}) ORDER BY updated_at, key",
                    [namespace, *chunk],
                )
                links += self._rows(
                    f"SELECT key, unit_id FROM item_units WHERE namespace = ? AND key IN ({marks})",
                    [namespace, *chunk],
                )
        units: dict[str, list[str]] = {}
        for key, unit_id in links:
            units.setdefault(str(key), []).append(str(unit_id))
        return [
            StoredItem(
                namespace=namespace,
                key=str(key),
                value=json.loads(str(value)),
                created_at=_moment(created),
                updated_at=_moment(updated),
                unit_ids=sorted(units.get(str(key), [])),
                ttl_minutes=None if ttl is None else float(ttl),
                expires_at=_expiry(expiry),
            )
            for key, value, created, updated, ttl, expiry in rows
        ]

    @override
    def item_keys(self, namespace: str, unit_ids: Iterable[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        for chunk, marks in chunks(list(dict.fromkeys(unit_ids))):
            for key, unit_id in self._rows(
                f"SELECT key, unit_id FROM item_units WHERE namespace = ? AND unit_id IN ({marks})",
                [namespace, *chunk],
            ):
                found[str(unit_id)] = str(key)
        return found

    @override
    def delete_item(self, namespace: str, key: str) -> bool:
        with self.transaction() as db:
            row = db.execute(
                "SELECT 1 FROM items WHERE namespace = ? AND key = ?", (namespace, key)
            ).fetchone()
            if row is None:
                return False
            _delete(db, namespace, key)
            changed(db, namespace)
        return True

    @override
    def refresh_items(self, namespace: str, keys: Iterable[str], now: datetime) -> None:
        living: list[str] = []  # a read of items without a TTL writes nothing
        for chunk, marks in chunks(list(dict.fromkeys(keys))):
            living += [
                str(row[0])
                for row in self._rows(
                    f"SELECT key FROM items WHERE namespace = ? AND key IN ({marks}) "
                    "AND ttl_minutes IS NOT NULL",
                    [namespace, *chunk],
                )
            ]
        if not living:
            return
        with self.transaction() as db:
            for chunk, marks in chunks(living):
                db.execute(
                    "UPDATE items SET expires_at = ? + ttl_minutes * 60 "
                    f"WHERE namespace = ? AND key IN ({marks})",
                    [now.timestamp(), namespace, *chunk],
                )

    @override
    def begin_put(self, namespace: str, key: str, intent: dict[str, Any]) -> None:
        with self.transaction() as db:
            db.execute("DELETE FROM put_intents WHERE namespace = ? AND key = ?", (namespace, key))
            db.execute(
                "INSERT INTO put_intents (namespace, key, intent) VALUES (?, ?, ?)",
                (namespace, key, json.dumps(intent, ensure_ascii=False)),
            )

    @override
    def unfinished_puts(self) -> list[tuple[str, str, dict[str, Any]]]:
        rows = self._rows(
            "SELECT namespace, key, intent FROM put_intents WHERE failure IS NULL "
            "ORDER BY namespace, key"
        )
        return [(str(ns), str(key), json.loads(str(intent))) for ns, key, intent in rows]

    @override
    def set_aside_put(self, namespace: str, key: str, failure: str) -> None:
        with self.transaction() as db:
            db.execute(
                "UPDATE put_intents SET failure = ? WHERE namespace = ? AND key = ?",
                (failure, namespace, key),
            )

    @override
    def puts_set_aside(self) -> list[tuple[str, str, dict[str, Any], str]]:
        rows = self._rows(
            "SELECT namespace, key, intent, failure FROM put_intents "
            "WHERE failure IS NOT NULL ORDER BY namespace, key"
        )
        return [(str(ns), str(k), json.loads(str(i)), str(f)) for ns, k, i, f in rows]

    @override
    def drop_put(self, namespace: str, key: str) -> None:
        with self.transaction() as db:
            db.execute("DELETE FROM put_intents WHERE namespace = ? AND key = ?", (namespace, key))

    @override
    def expired_items(self, now: datetime) -> list[tuple[str, str]]:
        rows = self._rows(
            "SELECT namespace, key FROM items WHERE expires_at <= ? ORDER BY expires_at, key",
            (now.timestamp(),),
        )
        return [(str(namespace), str(key)) for namespace, key in rows]
