"""Root units (standing facts grouped by person and topic) and the memories awaiting them."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from typing_extensions import override

from ripplegraph.agent.memory import RootUnit
from ripplegraph.agent.store.sql.database import SQLDatabase, Tx, changed


def drop_root_evidence(db: Tx, namespace: str, gone: set[str]) -> None:
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


class RootTables(SQLDatabase):
    """The root_units and pending_roots tables."""

    @override
    def root_units(self, namespace: str) -> list[tuple[RootUnit, bool]]:
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

    @override
    def replace_root_units(self, namespace: str, units: Sequence[RootUnit]) -> None:
        with self.transaction() as db:
            db.execute("DELETE FROM root_units WHERE namespace = ?", (namespace,))
            db.executemany(
                "INSERT INTO root_units VALUES (?,?,?,?,?,?,0)",
                [
                    (namespace, u.id, u.person, u.topic, u.rule, json.dumps(u.evidence_ids))
                    for u in units
                ],
            )  # fmt: skip
            changed(db, namespace)

    @override
    def add_pending_roots(self, namespace: str, ids: Iterable[str]) -> None:
        with self.transaction() as db:
            db.executemany(
                "INSERT INTO pending_roots VALUES (?, ?) ON CONFLICT DO NOTHING",
                [(i, namespace) for i in ids],
            )

    @override
    def pending_roots(self, namespace: str) -> list[str]:
        rows = self._rows(
            "SELECT p.unit_id FROM pending_roots p JOIN units u ON u.id = p.unit_id "
            "WHERE p.namespace = ? ORDER BY u.seq",
            (namespace,),
        )
        return [str(r[0]) for r in rows]

    @override
    def clear_pending_roots(self, ids: Iterable[str]) -> None:
        with self.transaction() as db:
            db.executemany("DELETE FROM pending_roots WHERE unit_id = ?", [(i,) for i in ids])
