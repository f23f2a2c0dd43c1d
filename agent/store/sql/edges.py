"""Typed edges, stored both ways, with their degrees."""

from __future__ import annotations

from collections.abc import Iterable

from typing_extensions import override

from ripplegraph.agent.store.edges import Edge, EdgeType, Pairs, WeightedPairs, reverse
from ripplegraph.agent.store.sql.database import SQLDatabase, changed, chunks


class EdgeTables(SQLDatabase):
    """The edges table.

    Its rows come typed as an ``Edge``'s fields in both dialects (TEXT as ``str``, REAL and
    DOUBLE PRECISION as ``float``), so they become edges as they are: expansion reads hundreds
    per step.
    """

    @override
    def edges_touching(self, ids: Iterable[str], edge_type: EdgeType) -> list[Edge]:
        wanted = list(dict.fromkeys(ids))
        edges: list[Edge] = []
        for chunk, marks in chunks(wanted):
            rows = self._rows(
                f"SELECT src, dst, type, weight FROM edges WHERE type = ? AND src IN ({marks})",
                [edge_type, *chunk],
            )
            edges += map(Edge._make, rows)
        return edges

    @override
    def degrees(self, ids: Iterable[str], edge_type: EdgeType) -> dict[str, int]:
        wanted = list(dict.fromkeys(ids))
        found = dict.fromkeys(wanted, 0)
        for chunk, marks in chunks(wanted):
            for node, count in self._rows(
                f"SELECT src, COUNT(*) FROM edges WHERE type = ? AND src IN ({marks}) GROUP BY src",
                [edge_type, *chunk],
            ):
                found[str(node)] = int(count)
        return found

    @override
    def replace_edges(
        self,
        namespace: str,
        edge_type: EdgeType,
        remove: Pairs,
        add: WeightedPairs,
    ) -> None:
        back = reverse(edge_type)
        removals = [(a, b) for a, b in remove]
        additions = [(a, b, w) for a, b, w in add]
        if not removals and not additions:
            return
        with self.transaction() as db:
            db.executemany(
                "DELETE FROM edges WHERE type = ? "
                "AND ((src = ? AND dst = ?) OR (src = ? AND dst = ?))",
                [(edge_type, a, b, b, a) for a, b in removals]
                + [(back, a, b, b, a) for a, b in removals],
            )
            db.executemany(
                "INSERT INTO edges VALUES (?,?,?,?,?) ON CONFLICT (src, type, dst) "
                "DO UPDATE SET namespace = excluded.namespace, weight = excluded.weight",
                [(namespace, a, b, edge_type, w) for a, b, w in additions]
                + [(namespace, b, a, back, w) for a, b, w in additions],
            )
            changed(db, namespace)

    @override
    def neighbours(
        self, namespace: str, ids: Iterable[str], edge_types: Iterable[str]
    ) -> list[Edge]:
        wanted = list(dict.fromkeys(ids))
        types = list(edge_types)
        if not wanted or not types:
            return []
        edges: list[Edge] = []
        type_marks = ",".join("?" * len(types))
        # Found by the primary key (src, type, dst), which holds the weight; the namespace
        # only guards against ids of another one.
        namespace_column = self.dialect.filter_only.format(column="namespace")
        for chunk, marks in chunks(wanted):
            rows = self._rows(
                f"SELECT src, dst, type, weight FROM edges WHERE {namespace_column} = ? "
                f"AND type IN ({type_marks}) AND src IN ({marks}) ORDER BY weight DESC, dst",
                [namespace, *types, *chunk],
            )
            edges += map(Edge._make, rows)
        return edges

    @override
    def edges(self, namespace: str) -> set[Edge]:
        rows = self._rows(
            "SELECT src, dst, type, weight FROM edges WHERE namespace = ?", (namespace,)
        )
        return set(map(Edge._make, rows))

    @override
    def count_edges(self, namespace: str) -> dict[str, int]:
        rows = self._rows(
            "SELECT type, COUNT(*) / 2 FROM edges WHERE namespace = ? GROUP BY type ORDER BY type",
            (namespace,),
        )
        return {str(t): int(n) for t, n in rows}
