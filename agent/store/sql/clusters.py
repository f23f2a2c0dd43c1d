"""Fact clusters: centroid sums and sizes, and which memory belongs to which."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from typing_extensions import override

from ripplegraph.agent.store.sql.database import SQLDatabase, chunks


class ClusterTables(SQLDatabase):
    """The clusters and cluster_members tables."""

    @override
    def clusters(self, namespace: str) -> dict[int, tuple[np.ndarray, int]]:
        rows = self._rows(
            "SELECT id, centroid, size FROM clusters WHERE namespace = ?", (namespace,)
        )
        return {
            int(i): (np.frombuffer(bytes(c), dtype=np.float32).copy(), int(n)) for i, c, n in rows
        }

    @override
    def assign_clusters(
        self, namespace: str, members: dict[str, int], clusters: dict[int, tuple[np.ndarray, int]]
    ) -> None:
        with self.transaction() as db:
            db.executemany(
                "INSERT INTO clusters VALUES (?,?,?,?) ON CONFLICT (namespace, id) "
                "DO UPDATE SET centroid = excluded.centroid, size = excluded.size",
                [
                    (namespace, cid, c.astype(np.float32).tobytes(), n)
                    for cid, (c, n) in clusters.items()
                ],
            )
            db.executemany(
                "INSERT INTO cluster_members VALUES (?,?,?) ON CONFLICT (unit_id) "
                "DO UPDATE SET namespace = excluded.namespace, cluster_id = excluded.cluster_id",
                [(mid, namespace, cid) for mid, cid in members.items()],
            )

    @override
    def cluster_members(self, namespace: str, cluster_id: int) -> list[str]:
        rows = self._rows(
            "SELECT m.unit_id FROM cluster_members m JOIN units u ON u.id = m.unit_id "
            "WHERE m.namespace = ? AND m.cluster_id = ? ORDER BY u.seq",
            (namespace, cluster_id),
        )
        return [str(r[0]) for r in rows]

    @override
    def clusters_of(self, ids: Iterable[str]) -> dict[str, set[int]]:
        found: dict[str, set[int]] = {}
        wanted = list(ids)
        for chunk, marks in chunks(wanted):
            for namespace, cid in self._rows(
                "SELECT DISTINCT namespace, cluster_id FROM cluster_members "
                f"WHERE unit_id IN ({marks})",
                chunk,
            ):
                found.setdefault(str(namespace), set()).add(int(cid))
        return found

    @override
    def reset_cluster(
        self, namespace: str, cluster_id: int, centroid: np.ndarray | None, size: int
    ) -> None:
        with self.transaction() as db:
            if centroid is None:
                db.execute(
                    "DELETE FROM clusters WHERE namespace = ? AND id = ?", (namespace, cluster_id)
                )
            else:
                db.execute(
                    "INSERT INTO clusters VALUES (?,?,?,?) ON CONFLICT (namespace, id) "
                    "DO UPDATE SET centroid = excluded.centroid, size = excluded.size",
                    (namespace, cluster_id, centroid.astype(np.float32).tobytes(), size),
                )
