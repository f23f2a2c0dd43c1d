"""``Memory``/``AsyncMemory``: add, search, get, delete, and a namespace's export round trip."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ripplegraph.agent.cli import app
from ripplegraph.agent.context import Deployed, Deployment
from ripplegraph.agent.errors import InvalidValueError
from ripplegraph.agent.memory import RootUnit
from ripplegraph.agent.services import Services
from ripplegraph.agent.surfaces.client import AsyncMemory, Memory
from ripplegraph.studio import demo_sessions

pytestmark = pytest.mark.integration
HARBOR = "Should we go to Harbor Grill for Maya's birthday dinner?"


def add_demo(memory: Memory, user_id: str = "alex") -> dict[str, str]:
    """The demo history, one ``add`` per session; session id → memory id."""
    return {
        session.id: memory.add(
            [{"role": "user", "name": t.speaker, "content": t.text} for t in session.turns],
            user_id=user_id,
            session_id=session.id,
            date=session.date,
        )
        for session in demo_sessions()
    }


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Memory, dict[str, str]]:
    memory = Memory(tmp_path_factory.mktemp("client") / "store")
    return memory, add_demo(memory)


def test_search_recalls_what_the_answer_needs_with_its_context(
    filled: tuple[Memory, dict[str, str]],
) -> None:
    memory, ids = filled
    found = memory.search(HARBOR, user_id="alex", limit=5)
    assert ids["demo-2024-05-01"] in [r.key for r in found.results]
    assert "allergic to seafood" in found.context
    assert len(found.results) <= 5
    assert memory.search(HARBOR, user_id="nobody").results == []


def test_get_and_get_all_return_what_was_added(filled: tuple[Memory, dict[str, str]]) -> None:
    memory, ids = filled
    item = memory.get(ids["demo-2024-04-23"], user_id="alex")
    assert item is not None and item.value["session"] == "demo-2024-04-23"
    assert item.value["messages"][0]["name"] == "Alex"
    assert [i.key for i in memory.get_all(user_id="alex")] == list(ids.values())
    assert memory.get(ids["demo-2024-04-23"], user_id="someone-else") is None


def test_export_and_import_round_trip_a_namespace(
    filled: tuple[Memory, dict[str, str]], tmp_path: Path
) -> None:
    memory, _ = filled
    source = memory.store.memory
    first, second, third = sorted(source.unit_ids("alex"))[:3]
    # Offline ingest stores no root unit or causal edge (a model's roles do): add one of each.
    source.replace_root_units(
        "alex", [RootUnit(id="r1", rule="no seafood", person="Maya", topic="diet",
                          evidence_ids=[first, second])]
    )  # fmt: skip
    source.replace_edges("alex", "causal", [], [(second, third, 0.8)])
    path = tmp_path / "alex.jsonl"
    written = memory.export(path, user_id="alex")
    assert written.counts["root"] == 1
    assert written.counts["unit"] == source.count_units("alex")
    assert written.counts["item"] == len(demo_sessions())

    fresh = Memory(tmp_path / "fresh")
    restored = fresh.import_(path)
    assert restored.counts == written.counts
    target = fresh.store.memory
    assert target.unit_ids("alex") == source.unit_ids("alex")
    assert target.edges("alex") == source.edges("alex")
    assert target.root_units("alex") == source.root_units("alex")
    assert [(i.key, i.value, i.unit_ids) for i in target.items("alex")] == [
        (i.key, i.value, i.unit_ids) for i in source.items("alex")
    ]
    assert target.pending_links("alex") == []
    assert target.check().consistent
    before = [r.key for r in memory.search(HARBOR, user_id="alex").results]
    assert [r.key for r in fresh.search(HARBOR, user_id="alex").results] == before

    with pytest.raises(InvalidValueError, match="already holds memories"):
        fresh.import_(path)


def test_a_broken_export_is_refused_whole(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "store")
    memory.add("I keep bees on the roof.", user_id="ana")
    path = tmp_path / "ana.jsonl"
    memory.export(path, user_id="ana")
    lines = path.read_text().splitlines()
    edge = {"type": "edge", "src": "m_x", "dst": "m_y", "edge_type": "semantic", "weight": 1.0}
    cases = {
        "cites units not before it in the file": [*lines, json.dumps(edge)],
        "header counts": [json.dumps({**json.loads(lines[0]), "units": 5}), *lines[1:]],
        "cites units not before": [lines[0], *lines[2:]],
        "no header": [],
        "line 2": [lines[0], "{not json"],
    }
    fresh = Memory(tmp_path / "fresh")
    for message, content in cases.items():
        broken = tmp_path / "broken.jsonl"
        broken.write_text("\n".join(content) + "\n")
        with pytest.raises(InvalidValueError, match=message):
            fresh.import_(broken)
    assert fresh.store.memory.count_units("ana") == 0 and fresh.store.memory.items("ana") == []


def test_delete_and_delete_all_forget(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "store")
    first = memory.add("My locker code is 4417.", user_id="ana")
    memory.add("I run on Tuesdays.", user_id="ana", date="2024-05-01")
    memory.delete(first, user_id="ana")
    assert memory.get(first, user_id="ana") is None
    assert [i.value["text"] for i in memory.get_all(user_id="ana")] == ["I run on Tuesdays."]
    assert memory.delete_all(user_id="ana") == 1
    assert memory.get_all(user_id="ana") == []


def test_async_memory_runs_the_same_calls(tmp_path: Path) -> None:
    memory = AsyncMemory(tmp_path / "store")

    async def session() -> tuple[str, list[str]]:
        added = await asyncio.gather(
            memory.add("I'm allergic to shellfish.", user_id="maya"),
            memory.add("I play padel on Sundays.", user_id="maya"),
        )
        found = await memory.search("Book the oyster bar for Maya?", user_id="maya", limit=1)
        return added[0], [r.key for r in found.results]

    allergy, keys = asyncio.run(session())
    assert keys == [allergy]


def test_the_cli_adds_lists_exports_and_imports(tmp_path: Path) -> None:
    store = ["--store", str(tmp_path / "store")]

    def cli(*args: str, stdin: str | None = None, code: int = 0) -> str:
        result = CliRunner().invoke(app, [*args, *store], input=stdin)
        assert result.exit_code == code, result.output
        return result.stdout

    allergy = cli("add", "-n", "maya", "I'm allergic to shellfish.", "--speaker", "Maya").strip()
    padel = cli("add", "-n", "maya", "-", stdin="I play padel on Sundays.\n").strip()
    listed = json.loads(cli("list", "-n", "maya", "--json"))
    assert [(i["key"], i["value"]) for i in listed] == [
        (allergy, {"text": "I'm allergic to shellfish.", "speaker": "Maya"}),
        (padel, {"text": "I play padel on Sundays.", "speaker": "User"}),
    ]
    assert allergy in cli("list", "-n", "maya")  # the whole id, to forget it by
    assert "maya" in cli("namespaces")
    out = tmp_path / "maya.jsonl"
    assert "2 units, 2 items" in cli("export", "-n", "maya", "--out", str(out))
    store = ["--store", str(tmp_path / "restored")]
    assert "restored 2 units, 2 items into 'maya'" in cli("import", str(out))
    assert [i["key"] for i in json.loads(cli("list", "-n", "maya", "--json"))] == [allergy, padel]
    assert "already holds memories" in CliRunner().invoke(app, ["import", str(out), *store]).output
    cli("add", "-n", "maya", "   ", code=2)
    cli("list", "-n", "nobody", code=2)


@pytest.mark.parametrize("fresh_context", ["chroma-server", "postgres"], indirect=True)
def test_a_namespace_moves_to_other_backends(
    filled: tuple[Memory, dict[str, str]], fresh_context: Deployed, tmp_path: Path
) -> None:
    """An export from embedded Chroma and SQLite restores on a Chroma server or PostgreSQL."""
    memory, _ = filled
    path = tmp_path / "alex.jsonl"
    memory.export(path, user_id="alex")
    there = Memory(deployment=fresh_context.deployment)
    there.import_(path)
    source, target = memory.store.memory, there.store.memory
    assert target.unit_ids("alex") == source.unit_ids("alex")
    assert target.edges("alex") == source.edges("alex")
    assert target.check().consistent
    found = there.search(HARBOR, user_id="alex")
    assert "allergic to seafood" in found.context


def test_a_bound_deployment_still_opens_its_store_with_a_deprecation(tmp_path: Path) -> None:
    context = Deployment(store_dir=str(tmp_path / "store")).bind()
    with pytest.warns(DeprecationWarning, match=r"Services\(context.deployment\).store\(\)"):
        opened = context.store()
    assert opened is Services(context.deployment).store()
