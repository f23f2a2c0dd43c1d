"""`check` finds every kind of damage it names, and `check --repair` removes it, losing nothing."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest

from ripplegraph.agent.context import Deployed
from ripplegraph.agent.services import Services
from tests.integration.conftest import check_report, ingest
from tests.tenants import tenant_sessions

pytestmark = pytest.mark.integration


@contextmanager
def unchecked_sql(context: Deployed) -> Iterator[Callable[..., object]]:
    """Statements on the store's relational side with foreign keys unenforced, committed.

    SQLite enforces them only on connections that ask; PostgreSQL skips them for a session in
    replica mode (the test server's role is a superuser).
    """
    url = context.deployment.database_url
    if url:
        with psycopg.connect(url, autocommit=True) as pg:
            pg.execute("SET session_replication_role = replica")
            yield lambda sql, params=(): pg.execute(sql.replace("?", "%s"), params)
        return
    with sqlite3.connect(Path(context.deployment.store_dir) / "graph.sqlite") as db:
        yield db.execute


def break_store(context: Deployed) -> dict[str, Any]:
    """Damage a store of two namespaces in every way ``check`` knows; returns what was hit."""
    store = Services(context.deployment).store()
    alice, bob = store.all_units("alice"), store.all_units("bob")
    unvectored, cited = alice[0].id, alice[1].id
    kept_edge = store.neighbours("alice", [alice[2].id], ["semantic", "structural"])[0]
    store.vectors.delete("alice", [unvectored])
    orphan = store.embedder.documents(["orphan"])
    store.vectors.upsert("alice", ["m_orphan"], orphan)
    misplaced = alice[7].id  # a vector also where alice's vectors do not live
    in_rows = store.vectors.placement("alice") == "rows"
    if in_rows:
        store.vectors.chroma.upsert("alice", [misplaced], orphan)
    else:
        store.relational.insert_vectors("alice", [misplaced], orphan)
    store.vectors.chroma.upsert("carol", ["m_carol"], orphan)  # namespaces with no unit
    store.relational.insert_vectors("dave", ["m_dave"], orphan)
    with unchecked_sql(context) as execute:
        edge = "INSERT INTO edges (namespace, src, dst, type, weight) VALUES (?, ?, ?, ?, 1.0)"
        execute(edge, ("alice", alice[3].id, "m_gone", "semantic"))
        execute(edge, ("alice", alice[3].id, bob[0].id, "semantic"))
        execute(edge, ("alice", bob[0].id, alice[3].id, "semantic"))
        execute(
            "DELETE FROM edges WHERE src = ? AND dst = ? AND type = ?",
            (kept_edge.dst, kept_edge.src, kept_edge.type),
        )
        execute("INSERT INTO cues VALUES ('alice', 'person', 'ghost', 'm_gone')")
        for table in ("pending_links", "pending_roots"):
            execute(f"INSERT INTO {table} (unit_id, namespace) VALUES ('m_gone', 'alice')")
        execute("INSERT INTO cluster_members VALUES ('m_gone', 'alice', 0)")
        item = (
            "INSERT INTO items (namespace, key, value, created_at, updated_at) "
            "VALUES ('alice', ?, '{}', '2024-01-01', '2024-01-01')"
        )
        execute(item, ("quoting",))
        execute(item, ("sound",))
        execute("INSERT INTO item_units VALUES ('alice', 'quoting', 'm_gone')")
        execute("INSERT INTO item_units VALUES ('alice', 'quoting', ?)", (alice[5].id,))
        execute("INSERT INTO item_units VALUES ('alice', 'sound', ?)", (alice[6].id,))
        root = "INSERT INTO root_units (namespace, id, person, topic, rule, evidence) VALUES "
        evidence = json.dumps([cited, "m_gone"])
        execute(root + "('alice', 'r1', 'Maya', 'diet', 'no nuts', ?)", (evidence,))
        execute(root + "('alice', 'r2', 'Tom', 'work', 'none', '[]')")
        execute("DELETE FROM namespaces WHERE namespace = 'bob'")
        execute("INSERT INTO pending_links VALUES (?, 'alice')", (alice[4].id,))  # sound
    return {
        "unvectored": unvectored,
        "cited": cited,
        "edge": kept_edge,
        "bob": len(bob),
        "in_rows": in_rows,
    }


def test_check_flags_a_broken_store_and_repair_fixes_it(fresh_context: Deployed) -> None:
    ingest(fresh_context, "alice", tenant_sessions(0))
    ingest(fresh_context, "bob", tenant_sessions(1))
    store = Services(fresh_context.deployment).store()
    edges_before = store.count_edges("alice")
    hit = break_store(fresh_context)

    assert not store.check().repaired  # checking alone repairs nothing
    found = check_report(fresh_context, exit_code=1)
    assert found["pending_links"] == {"alice": 1}
    assert not found["consistent"] and not found["repaired"] and not found["consistent_now"]
    assert (found["units"], found["namespaces"]) == (12 + hit["bob"], 2)
    assert found["problems"] == {
        "puts cut short": 0,
        "puts set aside": 0,
        "edges to missing units": 1,
        "edges across namespaces": 2,
        "edges stored one way only": 2,  # the one whose reverse was deleted, the one to m_gone
        "cue entries of missing units": 1,
        "pending links of missing units": 1,
        "pending roots of missing units": 1,
        "cluster members of missing units": 1,
        "items made of missing units": 1,
        "item links of missing units or items": 1,
        "root units citing missing units": 1,
        "root units without evidence": 1,
        "units of unregistered namespaces": hit["bob"],
        "units without a vector": 1,
    }
    assert found["leftovers"] == {
        "vectors without a unit": 1,
        "vectors where their namespace's do not live": 1,
        "vectors of unknown namespaces": 2,  # carol's and dave's; bob's units keep bob's known
    }

    repaired = check_report(fresh_context, "--repair")
    assert repaired["problems"] == found["problems"] and repaired["repaired"]
    assert repaired["consistent_now"]
    after = check_report(fresh_context)
    assert after["consistent"] and not any(after["problems"].values())
    assert not any(after["leftovers"].values()) and after["pending_links"] == {}

    store = Services(fresh_context.deployment).store()
    assert store.count_units("alice") == 12 and store.count_units("bob") == hit["bob"]
    assert hit["unvectored"] in store.vectors.ids("alice")
    assert "m_orphan" not in store.vectors.ids("alice")
    in_rows = hit["in_rows"]
    assert store.vectors.chroma.ids("alice") == (set() if in_rows else store.unit_ids("alice"))
    assert store.relational.vector_ids("alice") == (store.unit_ids("alice") if in_rows else set())
    assert sorted(store.vectors.namespaces()) == ["alice", "bob"]
    unvectored = store.get("alice", [hit["unvectored"]])[hit["unvectored"]]
    assert hit["unvectored"] in {m for m, _ in store.search_semantic("alice", unvectored.text, 3)}
    assert [i.key for i in store.items("alice")] == ["sound"]
    roots = store.root_units("alice", include_stale=True)
    assert [(r.id, r.evidence_ids) for r in roots] == [("r1", [hit["cited"]])]
    assert store.root_units("alice") == [], "stale"
    edge = hit["edge"]
    assert store.count_edges("alice")[edge.type] == edges_before[edge.type] - 1
    assert edge.dst not in {e.dst for e in store.neighbours("alice", [edge.src], [edge.type])}
    store.drop_namespace("bob")
    assert store.check().consistent
    assert sorted(store.vectors.namespaces()) == ["alice"]  # checking creates no collection
