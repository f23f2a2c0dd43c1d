"""The relational tables in SQL that SQLite and PostgreSQL share, one module per aggregate."""

from __future__ import annotations

from agent.store.sql.clusters import ClusterTables
from agent.store.sql.edges import EdgeTables
from agent.store.sql.items import ItemTables
from agent.store.sql.namespaces import NamespaceTables
from agent.store.sql.roots import RootTables
from agent.store.sql.units import UnitTables


class SQLTables(UnitTables, EdgeTables, RootTables, ClusterTables, ItemTables, NamespaceTables):
    """Every aggregate's tables; a backend adds the connection (``SQLDatabase``'s hooks)."""


__all__ = ["SQLTables"]
