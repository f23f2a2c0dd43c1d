"""The relational side on one SQLite file: the embedded default backend."""

from __future__ import annotations

from agent.store.sqlite.clusters import ClusterTables
from agent.store.sqlite.edges import EdgeTables
from agent.store.sqlite.namespaces import NamespaceTables
from agent.store.sqlite.roots import RootTables
from agent.store.sqlite.units import UnitTables


class SQLiteBackend(UnitTables, EdgeTables, RootTables, ClusterTables, NamespaceTables):
    """Every aggregate's tables over one shared connection (see ``SQLiteDatabase``)."""


__all__ = ["SQLiteBackend"]
