"""Where each namespace's vectors live, and the vectors a small namespace keeps in rows.

A vector row is keyed by its namespace and its unit.  A namespace's ``vectors`` column says
``rows`` (its vectors are rows of ``unit_vectors``, beside its units) or ``collection`` (a
Chroma collection of its own); a namespace of a store written before version 4 has none until
the store is opened, and its vectors are in a collection.  Every statement names the
namespace, and a read joins the units of that namespace: a row planted under another
namespace, or for a unit that was never committed, is never returned.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from typing_extensions import override

from ripplegraph.agent.store.backend import Placement
from ripplegraph.agent.store.sql.database import SQLDatabase, changed, chunks

_COMMITTED = (
    "FROM unit_vectors v JOIN units u ON u.id = v.unit_id AND u.namespace = v.namespace "
    "WHERE v.namespace = ?"
)


def _vector(blob: object) -> np.ndarray:
    return np.frombuffer(bytes(blob), dtype=np.float32)  # type: ignore[call-overload]


class VectorTables(SQLDatabase):
    """The ``unit_vectors`` table and each namespace's placement."""

    @override
    def placement(self, namespace: str) -> Placement | None:
        rows = self._rows("SELECT vectors FROM namespaces WHERE namespace = ?", (namespace,))
        found = rows[0][0] if rows else None
        return "rows" if found == "rows" else ("collection" if found == "collection" else None)

    @override
    def place(self, namespace: str, placement: Placement) -> None:
        with self.transaction() as db:
            changed(db, namespace, register=True)
            db.execute(
                "UPDATE namespaces SET vectors = ? WHERE namespace = ?", (placement, namespace)
            )

    @override
    def in_collections(self) -> list[str]:
        rows = self._rows(
            "SELECT namespace FROM namespaces WHERE vectors = 'collection' ORDER BY namespace"
        )
        return [str(r[0]) for r in rows]

    @override
    def unplaced(self) -> list[str]:
        rows = self._rows("SELECT namespace FROM namespaces WHERE vectors IS NULL")
        return sorted(str(r[0]) for r in rows)

    @override
    def insert_vectors(self, namespace: str, ids: Sequence[str], vectors: np.ndarray) -> None:
        matrix = np.asarray(vectors, dtype=np.float32)
        with self.transaction() as db:
            db.executemany(
                "INSERT INTO unit_vectors VALUES (?, ?, ?) ON CONFLICT (namespace, unit_id) "
                "DO UPDATE SET vector = excluded.vector",
                [(namespace, mid, matrix[i].tobytes()) for i, mid in enumerate(ids)],
            )

    @override
    def vectors(self, namespace: str, ids: Iterable[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for chunk, marks in chunks(list(dict.fromkeys(ids))):
            for mid, blob in self._rows(
                f"SELECT v.unit_id, v.vector {_COMMITTED} AND v.unit_id IN ({marks})",
                [namespace, *chunk],
            ):
                found[str(mid)] = _vector(blob)
        return found

    @override
    def namespace_vectors(
        self, namespace: str, *, committed: bool = True
    ) -> tuple[list[str], np.ndarray]:
        rows = (
            self._rows(f"SELECT v.unit_id, v.vector {_COMMITTED} ORDER BY u.seq", (namespace,))
            if committed
            else self._rows(
                "SELECT unit_id, vector FROM unit_vectors WHERE namespace = ? ORDER BY unit_id",
                (namespace,),
            )
        )
        if not rows:
            return [], np.zeros((0, 0), dtype=np.float32)
        matrix = np.frombuffer(b"".join(bytes(r[1]) for r in rows), dtype=np.float32)
        return [str(r[0]) for r in rows], matrix.reshape(len(rows), -1)

    @override
    def delete_vectors(self, namespace: str, ids: Iterable[str]) -> None:
        with self.transaction() as db:
            for chunk, marks in chunks(list(ids)):
                db.execute(
                    f"DELETE FROM unit_vectors WHERE namespace = ? AND unit_id IN ({marks})",
                    [namespace, *chunk],
                )

    @override
    def vector_ids(self, namespace: str) -> set[str]:
        rows = self._rows("SELECT unit_id FROM unit_vectors WHERE namespace = ?", (namespace,))
        return {str(r[0]) for r in rows}

    @override
    def vector_namespaces(self) -> list[str]:
        rows = self._rows("SELECT DISTINCT namespace FROM unit_vectors ORDER BY namespace")
        return [str(r[0]) for r in rows]
