"""One schema for every relational backend, in numbered migrations, and the SQL dialects.

A store records the version it is at (``meta.schema_version``); opening it applies every later
migration in one transaction.  Version 1 is the schema every store had before versions were
recorded: its statements are all ``IF [NOT] EXISTS``, so an older SQLite store takes it as is.
Version 2 adds the items a ``BaseStore`` client put (their values and the units made of them);
version 3 their time to live (minutes, and the moment they expire, in seconds since the epoch);
version 4 where each namespace's vectors live (rows of ``unit_vectors`` for a small namespace,
its own Chroma collection for a large one; unset for a namespace of an earlier version, whose
vectors are in a collection), what a compaction still owes (``compaction_debts``), and an
index of units by session (a forget or a resumed ingest of one session reads only it).
Version 5 adds the puts under way (``put_intents``): a put that writes memories logs itself
there first and clears it in the transaction that saves its item, so a put cut short by a
crash is found and finished on the next open.  Version 6 records why a logged put could not be
finished (``put_intents.failure``): such a put is set aside, so it never blocks another write,
until ``check --repair`` withdraws it.
The few words that differ between SQLite and PostgreSQL are a ``Dialect``'s.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Dialect:
    """What a backend's SQL spells its own way; ``{column}``/``{alias}`` are filled in."""

    blob: str
    """The byte-string column type."""
    real: str
    """The double-precision column type."""
    table_options: str
    """What follows a table whose primary key is its only index."""
    json_elements: str
    """A table expression of a JSON array's text elements, one ``value`` column."""
    json_length: str
    """The length of a JSON array held in a text column."""
    filter_only: str
    """A column compared without its index: SQLite would take a longer index prefix over the
    primary key, and then look every row up again."""


SQLITE = Dialect(
    blob="BLOB",
    real="REAL",
    table_options=" WITHOUT ROWID",
    json_elements="json_each({column}) AS {alias}",
    json_length="json_array_length({column})",
    filter_only="+{column}",
)
POSTGRES = Dialect(
    blob="BYTEA",
    real="DOUBLE PRECISION",
    table_options="",
    json_elements="jsonb_array_elements_text({column}::jsonb) AS {alias}(value)",
    json_length="jsonb_array_length({column}::jsonb)",
    filter_only="{column}",
)

META = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
"""The table the version lives in: created before any migration runs."""

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE IF NOT EXISTS namespaces (
            namespace TEXT PRIMARY KEY,
            generation BIGINT NOT NULL DEFAULT 0
        )""",
        """CREATE TABLE IF NOT EXISTS units (
            id TEXT PRIMARY KEY,
            namespace TEXT NOT NULL,
            seq BIGINT NOT NULL,
            text TEXT NOT NULL,
            kind TEXT NOT NULL,
            people TEXT NOT NULL,
            places TEXT NOT NULL,
            t_start {real},
            t_end {real},
            session_id TEXT NOT NULL,
            turn_ids TEXT NOT NULL,
            speaker TEXT,
            session_time TEXT
        )""",
        "CREATE INDEX IF NOT EXISTS units_by_namespace ON units (namespace, seq)",
        "DROP INDEX IF EXISTS units_by_time",
        """CREATE TABLE IF NOT EXISTS cues (
            namespace TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('person', 'place')),
            value TEXT NOT NULL,
            unit_id TEXT NOT NULL REFERENCES units (id),
            PRIMARY KEY (namespace, kind, value, unit_id)
        ){table_options}""",
        "CREATE INDEX IF NOT EXISTS cues_by_unit ON cues (unit_id)",
        """CREATE TABLE IF NOT EXISTS edges (
            namespace TEXT NOT NULL,
            src TEXT NOT NULL REFERENCES units (id),
            dst TEXT NOT NULL REFERENCES units (id),
            type TEXT NOT NULL,
            weight {real} NOT NULL,
            PRIMARY KEY (src, type, dst)
        ){table_options}""",
        "CREATE INDEX IF NOT EXISTS edges_by_namespace ON edges (namespace, type)",
        "CREATE INDEX IF NOT EXISTS edges_by_dst ON edges (dst)",
        """CREATE TABLE IF NOT EXISTS pending_links (
            unit_id TEXT PRIMARY KEY REFERENCES units (id),
            namespace TEXT NOT NULL
        ){table_options}""",
        """CREATE TABLE IF NOT EXISTS pending_roots (
            unit_id TEXT PRIMARY KEY REFERENCES units (id),
            namespace TEXT NOT NULL
        ){table_options}""",
        """CREATE TABLE IF NOT EXISTS root_units (
            namespace TEXT NOT NULL,
            id TEXT NOT NULL,
            person TEXT NOT NULL,
            topic TEXT NOT NULL,
            rule TEXT NOT NULL,
            evidence TEXT NOT NULL,
            stale INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (namespace, id)
        ){table_options}""",
        """CREATE TABLE IF NOT EXISTS clusters (
            namespace TEXT NOT NULL,
            id INTEGER NOT NULL,
            centroid {blob} NOT NULL,
            size INTEGER NOT NULL,
            PRIMARY KEY (namespace, id)
        ){table_options}""",
        """CREATE TABLE IF NOT EXISTS cluster_members (
            unit_id TEXT PRIMARY KEY REFERENCES units (id),
            namespace TEXT NOT NULL,
            cluster_id INTEGER NOT NULL
        ){table_options}""",
        "CREATE INDEX IF NOT EXISTS cluster_members_by_cluster "
        "ON cluster_members (namespace, cluster_id)",
    ),
    (
        """CREATE TABLE items (
            namespace TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (namespace, key)
        ){table_options}""",
        """CREATE TABLE item_units (
            namespace TEXT NOT NULL,
            key TEXT NOT NULL,
            unit_id TEXT NOT NULL REFERENCES units (id),
            PRIMARY KEY (namespace, key, unit_id)
        ){table_options}""",
        "CREATE INDEX item_units_by_unit ON item_units (unit_id)",
    ),
    (
        "ALTER TABLE items ADD COLUMN ttl_minutes {real}",
        "ALTER TABLE items ADD COLUMN expires_at {real}",
        "CREATE INDEX items_by_expiry ON items (expires_at)",
    ),
    (
        "ALTER TABLE namespaces ADD COLUMN vectors TEXT",
        """CREATE TABLE unit_vectors (
            namespace TEXT NOT NULL,
            unit_id TEXT NOT NULL,
            vector {blob} NOT NULL,
            PRIMARY KEY (namespace, unit_id)
        )""",
        "CREATE INDEX unit_vectors_by_unit ON unit_vectors (unit_id)",
        "CREATE INDEX units_by_session ON units (namespace, session_id)",
        """CREATE TABLE compaction_debts (
            part TEXT PRIMARY KEY,
            since {real} NOT NULL
        )""",
    ),
    (
        """CREATE TABLE put_intents (
            namespace TEXT NOT NULL,
            key TEXT NOT NULL,
            intent TEXT NOT NULL,
            PRIMARY KEY (namespace, key)
        ){table_options}""",
    ),
    ("ALTER TABLE put_intents ADD COLUMN failure TEXT",),
)
"""Migration ``n`` (1-based) takes a store from version ``n - 1`` to ``n``."""

TABLES = (
    "namespaces",
    "units",
    "cues",
    "edges",
    "pending_links",
    "pending_roots",
    "root_units",
    "clusters",
    "cluster_members",
    "items",
    "item_units",
    "unit_vectors",
    "compaction_debts",
    "put_intents",
    "meta",
)
"""Every table, for maintenance that visits each one (PostgreSQL's scrub)."""


def statements(dialect: Dialect, migration: int) -> list[str]:
    """The statements of migration ``migration`` (1-based) in ``dialect``."""
    words = {"blob": dialect.blob, "real": dialect.real, "table_options": dialect.table_options}
    return [statement.format(**words) for statement in MIGRATIONS[migration - 1]]
