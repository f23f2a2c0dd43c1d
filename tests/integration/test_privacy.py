"""Tenant isolation and forgetting, on embedded Chroma and on a real Chroma server."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ripplegraph.agent.cli import app
from ripplegraph.agent.context import Deployed
from ripplegraph.agent.decisions.policies.roots import namespace_roots
from ripplegraph.agent.graph import recall_graph
from ripplegraph.agent.memory import MemoryUnit, RootUnit
from ripplegraph.agent.recall_config import RECIPES
from ripplegraph.agent.services import Services
from ripplegraph.agent.state import RecallInput, RecallOutput
from ripplegraph.agent.store import LINK_TYPES, MemoryStore
from ripplegraph.agent.surfaces.tools import make_forget_tool
from tests.integration.conftest import BACKENDS, backend_context, ingest, store_args
from tests.tenants import TENANTS, secret, tenant_sessions

pytestmark = pytest.mark.integration
ROOTS = RECIPES["full"]


@pytest.fixture(scope="module", params=BACKENDS)
def tenants(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Deployed:
    """Every synthetic tenant in one store, with the largest recall budgets."""
    context = backend_context(
        request,
        tmp_path_factory.mktemp("tenants") / "store",
        recall={"rounds": 3, "hops": 3, "refinements": 2},
    )
    for index, namespace in enumerate(TENANTS):
        ingest(context, namespace, tenant_sessions(index))
    return context


def recall(context: Deployed, namespace: str, query: str) -> RecallOutput:
    raw = recall_graph.invoke(RecallInput(query=query, namespace=namespace), context=context)
    return RecallOutput.model_validate(raw)


def probes(store: MemoryStore, victim: int) -> list[str]:
    """Adversarial queries made of another tenant's exact words, names, places and dates."""
    units = store.all_units(TENANTS[victim])
    return [
        *(u.text for u in units),
        secret(victim),
        f"What is Maya's locker combination {secret(victim)}?",
        "Should I cook dinner for Maya? What is she allergic to?",
        "What happened on 1 March 2024 at the market?",
    ]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_no_channel_crosses_a_namespace(tenants: Deployed, data: st.DataObject) -> None:
    store = Services(tenants.deployment).store()
    reader = data.draw(st.sampled_from(range(len(TENANTS))), label="reader")
    victim = data.draw(st.sampled_from([i for i in range(len(TENANTS)) if i != reader]))
    query = data.draw(st.sampled_from(probes(store, victim)), label="query")
    namespace, victim_ns = TENANTS[reader], TENANTS[victim]
    own = {u.id for u in store.all_units(namespace)}
    foreign = {u.id for u in store.all_units(victim_ns)}

    result = recall(tenants, namespace, query)
    assert {e.memory.namespace for e in result.evidence} <= {namespace}
    assert {e.memory.id for e in result.evidence} <= own
    assert {mid for root in result.roots for mid in root.evidence_ids} <= own
    assert secret(victim) not in result.context
    trace = json.dumps([t.model_dump(mode="json") for t in result.trace])
    assert not [mid for mid in foreign if mid in trace]

    assert {mid for mid, _ in store.search_semantic(namespace, query, 50)} <= own
    assert {mid for mid, _ in store.search_lexical(namespace, query, 50)} <= own
    victim_unit = store.all_units(victim_ns)[0]
    cue_hits = store.search_cues(
        namespace, victim_unit.people, victim_unit.places, victim_unit.time, k=50
    )
    assert {m.unit_id for m in cue_hits} <= own
    assert store.neighbours(namespace, foreign, LINK_TYPES) == []
    assert store.get(namespace, foreign) == {}


def test_edges_never_cross_namespaces(tenants: Deployed) -> None:
    store = Services(tenants.deployment).store()
    report = store.check()
    assert report.consistent, report.problems
    for namespace in TENANTS:
        ids = [u.id for u in store.all_units(namespace)]
        for edge in store.neighbours(namespace, ids, LINK_TYPES):
            assert edge.dst in ids


# --- forgetting ----------------------------------------------------------------------------


def assert_forgotten(context: Deployed, namespace: str, gone: list[MemoryUnit]) -> None:
    """No channel returns a forgotten memory, and the store holds no trace of it."""
    store = Services(context.deployment).store()
    ids = {u.id for u in gone}
    remaining = {u.id for u in store.all_units(namespace)}
    assert not ids & remaining
    assert store.get(namespace, ids) == {}
    assert not ids & store.vectors.ids(namespace)
    for unit in gone:
        assert unit.id not in {m for m, _ in store.search_semantic(namespace, unit.text, 100)}
        assert unit.id not in {m for m, _ in store.search_lexical(namespace, unit.text, 100)}
        cues = store.search_cues(namespace, unit.people, unit.places, unit.time, k=100)
        assert unit.id not in {m.unit_id for m in cues}
        result = recall(context, namespace, unit.text) if remaining else None
        if result is not None:
            assert unit.id not in {e.memory.id for e in result.evidence}
            assert unit.text not in result.context
    assert not {e.dst for e in store.neighbours(namespace, remaining, LINK_TYPES)} & ids
    roots, _ = namespace_roots(store, namespace, ROOTS.max_root_units, ROOTS.root_evidence)
    for root in roots:
        assert root.evidence_ids and not ids & set(root.evidence_ids)
    report = store.check()
    assert report.consistent, report.problems
    assert not any(report.leftovers.values()), report.leftovers


@pytest.mark.parametrize("selector", ["memory_ids", "session", "person", "everything"])
def test_forget_removes_every_trace_and_nothing_else(
    fresh_context: Deployed, selector: str
) -> None:
    store = Services(fresh_context.deployment).store()
    ingest(fresh_context, "alice", tenant_sessions(0))
    ingest(fresh_context, "bob", tenant_sessions(1))
    bob_before = store.all_units("bob")
    bob_edges = store.neighbours("bob", [u.id for u in bob_before], LINK_TYPES)
    units = store.all_units("alice")
    roots_before, _ = namespace_roots(store, "alice", ROOTS.max_root_units, ROOTS.root_evidence)
    assert roots_before, "the tenant's allergy should make a root memory"
    chosen = {
        "memory_ids": {"memory_ids": [units[0].id, units[5].id]},
        "session": {"session": "s2"},
        "person": {"person": "maya"},
        "everything": {"everything": True},
    }[selector]
    expected = {
        "memory_ids": [units[0], units[5]],
        "session": [u for u in units if u.provenance.session_id == "s2"],
        "person": [u for u in units if "Maya" in u.people or u.provenance.speaker == "Maya"],
        "everything": units,
    }[selector]

    forgotten = store.forget("alice", **chosen)  # type: ignore[arg-type]

    assert sorted(forgotten) == sorted(u.id for u in expected)
    assert_forgotten(fresh_context, "alice", expected)
    assert store.all_units("bob") == bob_before
    assert store.neighbours("bob", [u.id for u in bob_before], LINK_TYPES) == bob_edges
    if selector == "person":
        roots, _ = namespace_roots(store, "alice", ROOTS.max_root_units, ROOTS.root_evidence)
        assert not [r for r in roots if r.person.lower() == "maya"]


def test_forget_needs_exactly_one_selector(fresh_context: Deployed) -> None:
    store = Services(fresh_context.deployment).store()
    ingest(fresh_context, "alice", tenant_sessions(0))
    before = store.count_units("alice")
    for selectors in ({}, {"session": "s1", "person": "Maya"}):
        with pytest.raises(ValueError, match="exactly one"):
            store.forget("alice", **selectors)  # type: ignore[arg-type]
    assert store.forget("alice", memory_ids=["m_not_there"]) == []
    assert store.forget("bob", memory_ids=[store.all_units("alice")[0].id]) == []
    assert store.count_units("alice") == before


def test_forget_tool_is_bound_to_its_namespace(fresh_context: Deployed) -> None:
    store = Services(fresh_context.deployment).store()
    ingest(fresh_context, "alice", tenant_sessions(0))
    ingest(fresh_context, "bob", tenant_sessions(1))
    bob = store.all_units("bob")
    tool = make_forget_tool("alice", fresh_context)
    assert "namespace" not in tool.args
    message = tool.invoke(
        {
            "type": "tool_call",
            "id": "call-1",
            "name": tool.name,
            "args": {"memory_ids": [bob[0].id, store.all_units("alice")[0].id]},
        }
    )
    assert message.content == "Forgot 1 memories."
    assert store.all_units("bob") == bob
    message = tool.invoke(
        {"type": "tool_call", "id": "call-2", "name": tool.name, "args": {"session": "s1"}}
    )
    assert len(message.artifact["forgotten"]) == 3


def test_interrupted_forget_leaves_only_invisible_vectors(
    fresh_context: Deployed, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Services(fresh_context.deployment).store()
    ingest(fresh_context, "alice", tenant_sessions(0))
    victim = store.all_units("alice")[1]

    def crash(namespace: str, ids: list[str]) -> None:
        raise KeyboardInterrupt("killed between the relational commit and the vector delete")

    monkeypatch.setattr(store.vectors, "delete", crash)
    with pytest.raises(KeyboardInterrupt):
        store.forget("alice", memory_ids=[victim.id])
    monkeypatch.undo()
    assert victim.id not in {m for m, _ in store.search_semantic("alice", victim.text, 50)}
    report = store.check()
    # Vector rows go in the transaction that deletes the units; a collection's vector after it.
    left = int(store.vectors.placement("alice") == "collection")
    assert report.consistent and report.leftovers["vectors without a unit"] == left
    store.check(repair=True)
    assert victim.id not in store.vectors.ids("alice")
    assert not any(store.check().leftovers.values())


def test_forget_and_check_commands(fresh_context: Deployed) -> None:
    ingest(fresh_context, "alice", tenant_sessions(0))
    units = Services(fresh_context.deployment).store().all_units("alice")
    toms = [u for u in units if "Tom" in u.people or u.provenance.speaker == "Tom"]
    assert 0 < len(toms) < len(units)
    opened = store_args(fresh_context)
    runner = CliRunner()
    unknown = runner.invoke(app, ["forget", "-n", "nobody", "--all", *opened])
    assert unknown.exit_code == 2 and "unknown namespace 'nobody'" in unknown.output
    neither = runner.invoke(app, ["forget", "-n", "alice", *opened])
    assert neither.exit_code == 2 and "exactly one" in neither.output
    by_person = runner.invoke(app, ["forget", "-n", "alice", "--person", "Tom", "--json", *opened])
    assert by_person.exit_code == 0, by_person.output
    result = json.loads(by_person.stdout)
    assert sorted(result["forgotten"]) == sorted(u.id for u in toms)
    assert result["remaining"] == len(units) - len(toms)
    checked = runner.invoke(app, ["check", "--json", *opened])
    assert checked.exit_code == 0, checked.output
    report = json.loads(checked.stdout)
    assert report["consistent"] and report["units"] == len(units) - len(toms)
    everything = runner.invoke(app, ["forget", "-n", "alice", "--all", "--json", *opened])
    assert json.loads(everything.stdout)["remaining"] == 0
    assert json.loads(runner.invoke(app, ["check", "--json", *opened]).stdout)["units"] == 0


def test_store_refuses_the_other_vector_backend(fresh_context: Deployed) -> None:
    ingest(fresh_context, "alice", tenant_sessions(0))
    other = "http://127.0.0.1:9" if fresh_context.deployment.chroma_url is None else None
    runner = CliRunner()
    database = fresh_context.deployment.database_url
    args = ["ask", "allergy?", "-n", "alice", "--store", fresh_context.deployment.store_dir]
    args += ["--database-url", database] if database else []
    result = runner.invoke(app, args + (["--chroma-url", other] if other else []))
    assert result.exit_code == 2
    assert "keeps its vectors" in " ".join(result.output.split())


def test_forgetting_part_of_a_consolidated_root_marks_it_stale(fresh_context: Deployed) -> None:
    store = Services(fresh_context.deployment).store()
    ingest(fresh_context, "alice", tenant_sessions(0))
    first, second = [u.id for u in store.all_units("alice")[:2]]
    root = RootUnit(id="root_x", person="Maya", topic="diet", rule="No peanuts for Maya.",
                    evidence_ids=[first, second])  # fmt: skip
    store.replace_root_units("alice", [root])
    assert [r.id for r in store.root_units("alice")] == ["root_x"]
    store.forget("alice", memory_ids=[first])
    assert store.root_units("alice") == []  # stale: not routed until rewritten
    [stale] = store.root_units("alice", include_stale=True)
    assert stale.evidence_ids == [second]
    assert store.check().consistent
