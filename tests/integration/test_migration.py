"""A store written by release 0.1.0 opens, recalls, and moves into today's layout in place.

``tests/fixtures/store-0.1.0.tar.gz`` is a store made by that release (commit 48dd777): the
demo history in ``alex`` and two items put through ``RippleGraphStore`` in ``sam``, each
namespace in a Chroma collection of its own, schema version 3.  Opening it migrates the
schema; every namespace is then known to be in a collection; ``ripplegraph compact`` moves the
small ones into rows and drops their collections, and recall finds the same memories.
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ripplegraph.agent.cli import app
from ripplegraph.agent.context import Deployed
from ripplegraph.agent.graph import recall_graph
from ripplegraph.agent.services import Services
from ripplegraph.agent.state import RecallInput, RecallOutput
from ripplegraph.agent.surfaces.langgraph_store import RippleGraphStore
from tests.conftest import deployed

pytestmark = pytest.mark.integration
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "store-0.1.0.tar.gz"
HARBOR = "Should we go to Harbor Grill for Maya's birthday dinner?"


def recalled(context: Deployed, namespace: str, query: str) -> list[str]:
    raw = recall_graph.invoke(RecallInput(query=query, namespace=namespace), context=context)
    return [e.memory.id for e in RecallOutput.model_validate(raw).evidence]


def test_a_store_of_the_last_release_migrates_in_place(tmp_path: Path) -> None:
    directory = tmp_path / "store"
    with tarfile.open(FIXTURE) as archive:
        archive.extractall(directory, filter="data")
    context = deployed(store_dir=str(directory))
    store = Services(context.deployment).store()

    assert store.relational.meta("schema_version") == "6"
    assert store.vectors.placement("alex") == store.vectors.placement("sam") == "collection"
    assert store.debts() == {}
    before = recalled(context, "alex", HARBOR)
    allergy = [u.id for u in store.all_units("alex") if "allergic to seafood" in u.text]
    assert allergy and set(allergy) <= set(before)
    items = RippleGraphStore(deployment=context.deployment)
    assert items.get(("sam",), "note-1").value["text"] == "I moved to Lisbon in March."

    result = CliRunner().invoke(app, ["compact", "--json", "--store", str(directory)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["demoted"] == 2

    assert store.vectors.placement("alex") == store.vectors.placement("sam") == "rows"
    assert store.vectors.chroma.namespaces() == []
    assert store.vectors.count("alex") == store.count_units("alex")
    assert recalled(context, "alex", HARBOR) == before
    lisbon = items.search(("sam",), query="Where does Sam live?", limit=2)
    assert lisbon[0].key == "note-1"
    report = store.check()
    assert report.consistent and not any(report.leftovers.values()), report
    folders = [p for p in (directory / "chroma").iterdir() if p.is_dir()]
    assert folders == [], "the dropped collections' index folders are deleted"

    items.put(("sam",), "note-3", {"text": "Sam adopted a dog called Pixel.", "speaker": "Sam"})
    items.delete(("sam",), "note-2")
    assert sorted(i.key for i in items.search(("sam",))) == ["note-1", "note-3"]
    assert store.check().consistent
