"""What a compaction still owes: the parts of a store that a forget left holding old bytes.

A part is named by the one who owes it (``relational`` for the database's own files, a
namespace's collection, Chroma's catalog); ``since`` is the time of the oldest forget not yet
compacted, so that the store can say when its erasure window closes.  Every process of a store
sees the same debts.
"""

from __future__ import annotations

from collections.abc import Iterable

from typing_extensions import override

from ripplegraph.agent.store.sql.database import SQLDatabase


class CompactionTables(SQLDatabase):
    """The ``compaction_debts`` table."""

    @override
    def owe(self, parts: Iterable[str], since: float) -> None:
        with self.transaction() as db:
            db.executemany(
                "INSERT INTO compaction_debts VALUES (?, ?) ON CONFLICT (part) DO NOTHING",
                [(part, since) for part in parts],
            )

    @override
    def debts(self) -> dict[str, float]:
        rows = self._rows("SELECT part, since FROM compaction_debts ORDER BY since, part")
        return {str(part): float(since) for part, since in rows}

    @override
    def settle(self, parts: Iterable[str]) -> None:
        with self.transaction() as db:
            db.executemany("DELETE FROM compaction_debts WHERE part = ?", [(p,) for p in parts])
