"""The relational tables in SQL that SQLite and PostgreSQL share, one module per aggregate."""

from __future__ import annotations

from ripplegraph.agent.store.sql.clusters import ClusterTables
from ripplegraph.agent.store.sql.compaction import CompactionTables
from ripplegraph.agent.store.sql.edges import EdgeTables
from ripplegraph.agent.store.sql.items import ItemTables
from ripplegraph.agent.store.sql.namespaces import NamespaceTables
from ripplegraph.agent.store.sql.roots import RootTables
from ripplegraph.agent.store.sql.units import UnitTables
from ripplegraph.agent.store.sql.vectors import VectorTables


class SQLTables(
    UnitTables,
    EdgeTables,
    RootTables,
    ClusterTables,
    ItemTables,
    VectorTables,
    CompactionTables,
    NamespaceTables,
):
    """Every aggregate's tables; a backend adds the connection (``SQLDatabase``'s hooks)."""


__all__ = ["SQLTables"]
