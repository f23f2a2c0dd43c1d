"""Smoke tests of every bench command on a tiny slice (real store, real graph)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from ripplegraph.agent.cli import app
from ripplegraph.agent.context import Deployed, Deployment
from ripplegraph.agent.decisions.linking import LinkingConfig
from ripplegraph.agent.decisions.policies.expansion import WALK_FEATURES
from ripplegraph.agent.decisions.policies.ranking import FEATURES
from ripplegraph.agent.eval.conversations import normalise_evidence
from ripplegraph.agent.eval.prefeval import PREFERENCE_DATE, PrefRecord, RecordScorer
from ripplegraph.agent.eval.systems import reciprocal_rank_fusion
from ripplegraph.agent.graph import ingest_graph
from ripplegraph.agent.learned import Ranker
from ripplegraph.agent.memory import Session, Turn
from ripplegraph.agent.recall_config import FULL
from ripplegraph.agent.services import Services
from ripplegraph.agent.state import IngestInput
from ripplegraph.agent.surfaces.api import recall_state
from ripplegraph.studio import DEMO_NAMESPACE
from tests.conftest import deployed
from tests.locomo_sample import calvin_sample, write_calvin
from tests.memgallery_sample import write_gallery
from tests.postgres_server import new_database

pytestmark = pytest.mark.integration
SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"


def test_evidence_ids_are_normalised() -> None:
    assert normalise_evidence(["D8:6; D9:17", "D:11:26", "D30:05", "D"]) == [
        "D8:6",
        "D9:17",
        "D11:26",
        "D30:5",
    ]


def test_reciprocal_rank_fusion() -> None:
    assert reciprocal_rank_fusion(["a", "b", "c"], ["c", "a"]) == ["a", "c", "b"]


def test_bench_locomo_smoke(tmp_path: Path) -> None:
    data = write_calvin(tmp_path / "locomo.json")
    results = tmp_path / "results"
    out = tmp_path / "out.json"
    args = ["bench", "locomo", "--data", str(data), "--store", str(tmp_path / "store"),
            "--results", str(results), "--out", str(out)]  # fmt: skip
    run = CliRunner().invoke(app, args)
    assert run.exit_code == 0, run.output
    summary = json.loads(out.read_text())
    assert set(summary["systems"]) >= {"bm25", "dense", "hybrid", "first_hop", "ripplegraph",
                                       "no_expansion", "no_structural", "no_planning",
                                       "no_roots", "no_counterfactual"}  # fmt: skip
    assert summary["data"]["questions"] == 2 and summary["data"]["dropped_evidence_ids"] == 1
    libraries = summary["environment"]["libraries"]
    assert libraries["numpy"] == np.__version__ and libraries["onnxruntime"], "what it ran with"
    for scores in summary["systems"].values():
        assert 0.0 <= scores["overall"]["R@10"] <= 1.0
        assert scores["latency_ms"]["p50"] > 0
    # Two gold turns, five turns in all: every system holds both in its top 10.
    assert summary["systems"]["dense"]["multi-hop"]["All@10"] == 1.0
    assert summary["analysis"]["multi_hop_gold_turns"] == 2
    assert (results / "bench_locomo.md").read_text().startswith("| system |")
    assert (results / "bench_locomo.png").stat().st_size > 1000
    assert summary["exact_terms"]["first_for_the_code"] == 60
    assert "Exact terms among 400 look-alike memories" in (results / "bench_locomo.md").read_text()


def test_bench_folds_scores_each_variant_per_conversation(tmp_path: Path) -> None:
    second = calvin_sample()[0] | {"sample_id": "conv-y"}
    data = write_calvin(tmp_path / "locomo.json", [*calvin_sample(), second])
    results = tmp_path / "results"
    args = ["bench", "folds", "--data", str(data), "--store", str(tmp_path / "store"),
            "--vary", "hops=1", "--vary", "expansion=false", "--results", str(results)]  # fmt: skip
    run = CliRunner().invoke(app, args)
    assert run.exit_code == 0, run.output
    summary = json.loads((results / "bench_folds.json").read_text())
    assert summary["questions"] == {"conv-x": 1, "conv-y": 1}
    assert list(summary["systems"]) == ["first_hop", "full", "hops=1", "expansion=false"]
    for name, scores in summary["systems"].items():
        assert set(scores["conversations"]) == {"conv-x", "conv-y"}
        assert scores["latency_p50_ms"] > 0
        assert ("against_full" in scores) == (name not in ("first_hop", "full"))
    # Five turns: every system keeps both gold turns in its top 30, so each fold keeps "full".
    assert [(f["held_out"], f["chosen"], f["score"]) for f in summary["folds"]] == [
        ("conv-x", "full", 1.0), ("conv-y", "full", 1.0)
    ]  # fmt: skip
    assert summary["leave_one_out"]["total"] == summary["leave_one_out"]["first_hop"] == 1.0
    assert "Leave-one-out multi-hop All@30: 1.000" in (results / "bench_folds.md").read_text()
    assert (results / "bench_folds.png").stat().st_size > 1000


def test_bench_ranker_retrains_the_same_file_twice(tmp_path: Path) -> None:
    """The documented retraining command, on two conversations of two kinds: deterministic."""
    data = [write_calvin(tmp_path / "locomo.json"), write_gallery(tmp_path / "dialog")]
    files = []
    for attempt in ("first", "second"):
        written = tmp_path / f"{attempt}.json"
        args = ["bench", "ranker", *(a for d in data for a in ("--data", str(d))),
                "--store", str(tmp_path / attempt), "--results", str(tmp_path / attempt),
                "--write", str(written), "--no-charts"]  # fmt: skip
        run = CliRunner().invoke(app, args)
        assert run.exit_code == 0, run.output
        files.append(written.read_bytes())
    assert files[0] == files[1]
    ranker = Ranker.from_json(files[0].decode())
    assert ranker.features == FEATURES
    assert ranker.about["conversations"] == ["Astronomy", "conv-x"]
    summary = json.loads((tmp_path / "first" / "bench_ranker.json").read_text())
    assert set(summary["kinds"]) == {"LoCoMo", "Mem-Gallery"}
    assert (
        summary["simulation_matches_graph"]["questions"]
        == summary["simulation_matches_graph"]["of"]
    )
    for group in summary["kinds"].values():
        assert set(group["systems"]) == {
            "first_hop",
            "hand_ranked",
            "learned (left out)",
            "learned (in sample)",
        }
    assert (
        "**Mem-Gallery** (1 conversation)" in (tmp_path / "first" / "bench_ranker.md").read_text()
    )
    # Five turns a conversation: the first hop pools them all, so no walk has anything to
    # choose and every fold walks by hand.
    assert summary["walk"] == {
        "features": list(WALK_FEATURES),
        "folds_learned": 0,
        "folds": 2,
        "shipped_learned": False,
    }


def test_bench_ranker_judges_a_setting_with_rankers_trained_under_it(tmp_path: Path) -> None:
    """Under a variant the hand-ranked run is made with it: the first hop's settings, its scores.

    Its folds leave a kind out (here one conversation each), as the report says.
    """
    data = [write_calvin(tmp_path / "locomo.json"), write_gallery(tmp_path / "dialog")]
    variant = "expansion=false+roots=false+counterfactual=false"
    args = ["bench", "ranker", *(a for d in data for a in ("--data", str(d))),
            "--store", str(tmp_path / "store"), "--results", str(tmp_path / "results"),
            "--vary", variant, "--leave", "kind", "--no-charts"]  # fmt: skip
    run = CliRunner().invoke(app, args)
    assert run.exit_code == 0, run.output
    summary = json.loads((tmp_path / "results" / "bench_ranker.json").read_text())
    assert summary["settings"] == variant
    assert summary["leave_out"] == "kind"
    # Question by question the same turns in the same order (under the shipped settings the
    # hand-ranked graph walks, and its order differs from the first hop's on this data).
    questions = json.loads((tmp_path / "results" / "bench_ranker_questions.json").read_text())
    assert questions["hand_ranked"] == questions["first_hop"]
    assert (
        (tmp_path / "results" / "bench_ranker.md")
        .read_text()
        .startswith(f"Recall with `{variant}`")
    )
    assert "trained on every conversation of the other kinds" in " ".join(
        (tmp_path / "results" / "bench_ranker.md").read_text().split()
    )


def test_bench_ranker_refuses_before_it_trains(tmp_path: Path) -> None:
    data = write_calvin(tmp_path / "locomo.json")
    store = tmp_path / "store"
    for args, says in (
        ([], "the ranker needs at least two conversations"),
        (["--write", str(tmp_path / "missing" / "r.json")], "no folder"),
        (["--vary", "rounds=1,2"], "one value"),
        (["--vary", "colour=1"], "cannot vary 'colour'"),
        (["--vary", "rounds=1", "--write", str(tmp_path / "r.json")], "leave out --vary"),
        (["--vary", "rounds=1", "--write-walker", str(tmp_path / "w.json")], "leave out --vary"),
        (["--leave", "turn"], "'turn' is not one of 'conversation', 'kind'"),
    ):
        run = CliRunner().invoke(
            app, ["bench", "ranker", "--data", str(data), "--store", str(store), *args]
        )
        assert run.exit_code == 2, run.output
        assert says in " ".join(run.output.split())
    galleries = [write_gallery(tmp_path / name, name) for name in ("Astronomy", "Botany")]
    run = CliRunner().invoke(
        app, ["bench", "ranker", *(a for d in galleries for a in ("--data", str(d))),
              "--store", str(store), "--leave", "kind"],
    )  # fmt: skip
    assert run.exit_code == 2, run.output
    assert "--leave kind: the data holds one kind" in " ".join(run.output.split())
    assert not store.exists()  # refused before anything was ingested


def test_bench_folds_refuses_what_it_cannot_fold(tmp_path: Path) -> None:
    data = write_calvin(tmp_path / "locomo.json")
    store = str(tmp_path / "store")
    for args, says in (
        (["--vary", "hops=1"], "folds need at least two conversations"),
        (["--vary", "max_anchors=many"], "--vary max_anchors='many': not an int"),
    ):
        run = CliRunner().invoke(app, ["bench", "folds", "--data", str(data), "--store", store,
                                       *args])  # fmt: skip
        assert run.exit_code == 2, run.output
        assert says in " ".join(run.output.split())
    assert not (tmp_path / "store").exists()  # refused before anything was ingested


def test_settings_chosen_in_code_reach_every_node(demo_context: Deployed) -> None:
    without = demo_context.model_copy(update={"recall_settings": replace(FULL, expansion=False)})
    ran = {e.node for e in recall_state("Where should Sam take Maya?", DEMO_NAMESPACE,
                                         demo_context)["trace"]}  # fmt: skip
    tuned = {e.node for e in recall_state("Where should Sam take Maya?", DEMO_NAMESPACE,
                                          without)["trace"]}  # fmt: skip
    assert {"plan_recollection", "expand_locally"} <= ran
    assert not {"plan_recollection", "expand_locally"} & tuned


def test_a_run_on_other_data_leaves_the_published_results_alone(
    tmp_path: Path, repo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From a checkout, ``--out`` alone: every file goes beside it, none to benchmarks/."""
    published = repo_root / "benchmarks" / "results"

    def snapshot() -> dict[str, bytes]:
        return {str(p.relative_to(published)): p.read_bytes() for p in published.rglob("*")
                if p.is_file()}  # fmt: skip

    before, top = snapshot(), sorted(p.name for p in repo_root.iterdir())
    monkeypatch.chdir(repo_root)
    data = write_calvin(tmp_path / "other.json")
    out = tmp_path / "mine" / "mine.json"
    args = ["bench", "locomo", "--data", str(data), "--store", str(tmp_path / "store"),
            "--systems", "bm25,ripplegraph", "--out", str(out), "--no-exact-terms"]  # fmt: skip
    run = CliRunner().invoke(app, args)
    assert run.exit_code == 0, run.output
    assert json.loads(out.read_text())["data"]["questions"] == 2
    written = sorted(p.name for p in out.parent.iterdir())
    assert written == ["bench_locomo.json", "bench_locomo.md", "bench_locomo.png",
                       "bench_locomo_questions.json", "mine.json"]  # fmt: skip
    assert snapshot() == before
    assert sorted(p.name for p in repo_root.iterdir()) == top


def test_bench_soak_and_tenants_smoke(tmp_path: Path) -> None:
    """The load benches on a tiny load: their tables, their checks, their files."""
    soak = ["bench", "soak", "--users", "2", "--memories", "4", "--minutes", "0.1",
            "--rate", "4", "--ttl-minutes", "0.02", "--store", str(tmp_path / "soak"),
            "--results", str(tmp_path / "r"), "--no-charts"]  # fmt: skip
    run = CliRunner().invoke(app, soak)
    assert run.exit_code == 0, run.output
    summary = json.loads((tmp_path / "r" / "bench_soak.json").read_text())
    assert summary["errors"] == {} and summary["check"]["consistent"]
    assert summary["forgotten_left_in_files"] == 0
    assert sum(row["count"] for row in summary["latency_ms"].values()) > 0
    tenants = ["bench", "tenants", "--users", "6", "--memories", "3", "--samples", "3",
               "--store", str(tmp_path / "tenants"), "--results", str(tmp_path / "r"),
               "--no-charts"]  # fmt: skip
    run = CliRunner().invoke(app, tenants)
    assert run.exit_code == 0, run.output
    size = json.loads((tmp_path / "r" / "bench_tenants.json").read_text())["sizes"]["6"]
    assert size["users"] == 6 and size["namespaces_page_size"] >= 6
    assert size["recall_ms"]["p50"] > 0 and size["cold_start_s"] > size["model_load_s"]
    assert (tmp_path / "r" / "bench_tenants.md").read_text().startswith("3 memories per user")


def test_bench_cli_times_each_verb_cold_and_warm(tmp_path: Path) -> None:
    """One cold run of each verb in a new process, and the API's calls warm, with goals."""
    run = CliRunner().invoke(
        app, ["bench", "cli", "--repeats", "1", "--results", str(tmp_path / "r"), "--charts"]
    )
    assert run.exit_code == 0, run.output
    summary = json.loads((tmp_path / "r" / "bench_cli.json").read_text())
    assert list(summary["cold"]) == ["--help", "list", "add", "ask"]
    cold, warm = summary["cold"], summary["warm"]
    assert all(row["runs"] == 1 and row["p50_s"] > 0 for row in cold.values())
    assert cold["--help"]["goal_s"] == 0.5 and cold["add"]["goal_s"] == 2.5
    assert warm["add"]["p50_s"] < cold["add"]["p50_s"], "warm pays no start-up"
    table = (tmp_path / "r" / "bench_cli.md").read_text()
    assert "| `ask` |" in table and (tmp_path / "r" / "bench_cli.png").exists()


def test_bench_scale_grows_one_namespace(tmp_path: Path) -> None:
    data = write_calvin(tmp_path / "locomo.json")
    args = ["bench", "scale", "--data", str(data), "--units", "8,20", "--queries", "2",
            "--turns", "2", "--store", str(tmp_path / "store"),
            "--results", str(tmp_path / "r")]  # fmt: skip
    run = CliRunner().invoke(app, args)
    assert run.exit_code == 0, run.output
    summary = json.loads((tmp_path / "r" / "bench_scale.json").read_text())
    ingest = summary["ingest"]
    assert ingest["units"] == 5 and ingest["units_per_s"] > 0
    assert ingest["reference_embed_units_per_s"] > 0
    parts = [ingest[k] for k in ("embed_s", "store_s", "link_s", "other_s")]
    assert min(parts) >= 0 and sum(parts) <= ingest["seconds"] + 0.1  # (texts embedded
    # earlier in this process come from the embedder's cache, so embed_s may be 0 here)
    small, large = summary["sizes"]["8"], summary["sizes"]["20"]
    assert small["units"] == 8  # grown to 8; two turns remembered, then forgotten
    assert large["units"] == 20
    for size in (small, large):
        assert size["forget_ms"]["p50"] > 0
        assert size["recall_p50_ms"] > 0 and size["floor_p50_ms"] > 0
        assert size["write_then_recall_p50_ms"] > 0 and size["rss_mb"] > 0
        nodes = size["per_node_p50_ms"]
        assert {"first_hop_recall", "check_sufficiency", "assemble_evidence"} <= set(nodes)
        assert min(nodes.values()) > 0 and size["between_nodes_p50_ms"] > 0
        assert sum(nodes.values()) + size["between_nodes_p50_ms"] < 3 * size["recall_p50_ms"]
        stepping = size["stepping"]  # every recall passes its first hop, a check and assembly
        assert stepping["steps_per_recall"] >= 4 and stepping["ms_per_step"] > 0
        assert 0 < stepping["replayed_p50_ms"] < size["recall_p50_ms"]
        browser = size["browser"]
        assert browser["after_add_ms"]["p50"] > 0 and browser["after_forget_ms"]["p50"] > 0
        collected = size["garbage_collection"]
        assert collected["recalls"] == 4 and collected["tracked_objects"] > 0
        assert min(collected["young_ms_per_recall"], collected["longest_pause_ms"]) >= 0
        assert size["recall_mean_ms"] > 0
    store = Services(Deployment(store_dir=str(tmp_path / "store"))).store()
    assert store.namespaces() == ["scale"], "every unit lives in one namespace"
    assert summary["vector_bytes"] == 384 * 4  # all-MiniLM-L6-v2's float32 vector
    assert summary["bytes_per_memory_beyond_vector"] == (
        summary["bytes_per_memory"] - summary["vector_bytes"]
    )
    report = (tmp_path / "r" / "bench_scale.md").read_text()
    assert report.startswith("| units |") and "after a forget p50 ms" in report
    assert "| between nodes ms | LangGraph alone ms |" in report
    assert "beyond its vector's 1536" in report
    assert "Garbage collection during the 4 timed recalls at 20 units" in report


def test_bench_scale_reports_postgresql_beside_sqlite(tmp_path: Path, postgres: str) -> None:
    data = write_calvin(tmp_path / "locomo.json")
    database = new_database(postgres)
    args = ["bench", "scale", "--data", str(data), "--units", "8", "--queries", "2",
            "--turns", "2", "--results", str(tmp_path / "r"), "--no-charts",
            "--database-url", database]  # fmt: skip
    for _ in range(2):  # the second run starts from an empty namespace again
        run = CliRunner().invoke(app, args)
        assert run.exit_code == 0, run.output
        summary = json.loads((tmp_path / "r" / "bench_scale.json").read_text())
        remote = summary["postgresql"]
        assert remote["ingest"]["units"] == 5 and remote["sizes"]["8"]["units"] == 8
        assert remote["sizes"]["8"]["recall_p50_ms"] > 0
        assert summary["sizes"]["8"]["units"] == 8
    assert "on PostgreSQL" in (tmp_path / "r" / "bench_scale.md").read_text()


def write_prefeval(root: Path) -> Path:
    (root / "explicit_preference").mkdir(parents=True)
    (root / "implicit_preference" / "choice-based").mkdir(parents=True)
    (root / "implicit_preference" / "persona-driven").mkdir(parents=True)
    pref = {
        "preference": "I am vegan and never eat animal products.",
        "question": "Can you suggest a dinner recipe for tonight?",
        "explanation": "x",
    }
    (root / "explicit_preference" / "food.json").write_text(json.dumps([pref]))
    choice = pref | {"conversation": {
        "query": "Which cooking class should I take?",
        "assistant_options": "1. Butchery 2. Plant-based cooking 3. Cheese making",
        "user_selection": "Plant-based cooking, definitely, nothing with animals.",
        "assistant_acknowledgment": "Great choice."}}  # fmt: skip
    (root / "implicit_preference" / "choice-based" / "food.json").write_text(json.dumps([choice]))
    persona = pref | {"persona": "a chef", "conversation": {
        "0": {"user": "I run a small vegan bistro downtown.", "assistant": "Nice!"},
        "1": {"user": "The weather is grey today.", "assistant": "Stay dry."}}}  # fmt: skip
    (root / "implicit_preference" / "persona-driven" / "food.json").write_text(
        json.dumps([persona])
    )
    filler = [{"conversation": [{"role": "user", "content": f"Tell me about topic {i}."}
                                for i in range(12)]}]  # fmt: skip
    (root / "filtered_inter_turns.json").write_text(json.dumps(filler))
    return root


def test_bench_prefeval_smoke(tmp_path: Path) -> None:
    data = write_prefeval(tmp_path / "prefeval")
    args = ["bench", "prefeval", "--data", str(data), "--fillers", "3,10",
            "--systems", "bm25,dense,ripplegraph", "--store", str(tmp_path / "store"),
            "--results", str(tmp_path / "r"), "--no-charts"]  # fmt: skip
    run = CliRunner().invoke(app, args)
    assert run.exit_code == 0, run.output
    summary = json.loads((tmp_path / "r" / "bench_prefeval.json").read_text())
    assert set(summary["systems"]["dense"]) == {
        f"{form}/N={n}" for form in ("explicit", "choice-based", "persona-driven") for n in (3, 10)
    }
    assert summary["systems"]["dense"]["explicit/N=3"]["Hit@5"] == 1.0
    assert summary["data"]["records"] == {"explicit": 1, "choice-based": 1, "persona-driven": 1}


def test_bench_locomo_llm_answers_and_judge(tmp_path: Path) -> None:
    """`--llm` through the real OpenAI wire protocol, against a scripted loopback server."""
    from tests.openai_server import Reply, Request, ScriptedOpenAI

    def script(request: Request) -> Reply:
        if request.role == "answer":
            knows = "mansion" in request.user
            answer = "a mansion in Japan and a car" if knows else "memory holds nothing on it"
            return Reply(json.dumps({"answer": answer, "cited_ids": [], "supported": knows}))
        correct = "a mansion in Japan" in request.user
        return Reply(json.dumps({"correct": correct, "reason": "compared with the reference"}))

    server = ScriptedOpenAI(script)
    try:
        data = write_calvin(tmp_path / "locomo.json")
        out = tmp_path / "out.json"
        args = ["bench", "locomo", "--data", str(data), "--store", str(tmp_path / "store"),
                "--results", str(tmp_path / "results"), "--out", str(out), "--no-charts",
                "--systems", "bm25,ripplegraph", "--no-exact-terms",
                "--llm", "scripted", "--base-url", server.url]  # fmt: skip
        run = CliRunner().invoke(app, args)
        assert run.exit_code == 0, run.output
        summary = json.loads(out.read_text())
        for system in ("bm25", "ripplegraph"):
            overall = summary["systems"][system]["overall"]
            assert overall["Judge"] == 1.0 and 0.5 < overall["F1"] <= 1.0
        assert server.calls("answer") == server.calls("judge") == 2 * 2  # 2 systems × 2
        assert "Judge / F1" in (tmp_path / "results" / "bench_locomo.md").read_text()
    finally:
        server.close()


def test_prefeval_template_is_restored_exactly(tmp_path: Path) -> None:
    """A record linked into the filler displaces filler edges; scoring puts them back."""
    data = write_prefeval(tmp_path / "prefeval")
    # One edge per node: any edge to the record must displace a filler–filler edge.
    context = deployed(
        store_dir=str(tmp_path / "store"), linking=LinkingConfig(max_edges_per_channel=1)
    )
    scorer = RecordScorer(data, context, ["dense", "ripplegraph"], [10])
    [template] = scorer.templates
    assert template.edges, "the filler should be linked"
    turns = [Turn(speaker="User", text=f"Tell me about topic {i}, please.", id=f"pref:{i}")
             for i in range(1, 4)]  # fmt: skip
    session = Session(id="pref", date=PREFERENCE_DATE, turns=turns)
    record = PrefRecord(
        "explicit", "topics", 0, "Tell me about topic 2.", "topic 2", session, "pref:2"
    )

    ingest_graph.invoke(
        IngestInput(namespace=template.namespace, sessions=[session]), context=context
    )
    linked = set(scorer.store.neighbours(template.namespace, template.ids, ("semantic",)))
    assert template.edges - linked, "linking the record should displace a filler edge"
    scorer._restore(template, "pref")
    assert (
        set(scorer.store.neighbours(template.namespace, template.ids, ("semantic", "structural")))
        == template.edges
    )

    scores = scorer.score(record)
    assert {(system, bucket) for system, bucket, _ in scores} == {
        ("dense", "explicit/N=10"),
        ("ripplegraph", "explicit/N=10"),
    }
    assert scorer.store.unit_ids(template.namespace) == template.ids
    assert scorer.store.check().consistent


def write_imlogic(folder: Path) -> Path:
    """Two users in IMLogic's own file format (invented people, not the dataset)."""
    folder.mkdir()
    options = {
        "Correct": "Hold off: your income is zero right now.",
        "Trap_Preference": "Yes, you love vibrant travel, book it.",
        "Trap_Fabrication": "Yes, your promotion pays for it.",
        "Trap_Generic": "Travel broadens the mind.",
    }
    rows = [
        {"memory_s": "Ada Stone loves vibrant, enriching travel experiences.",
         "memory_l": "Ada Stone's career_status updated monthly_income from 8000 to 0.",
         "query_type": "Advice", "category": "Resource Constraint",
         "query": "Should I book that luxury world tour for some vibrant experiences?",
         "options": options},
        {"memory_s": "Ada Stone enjoys long hikes in the mountains on weekends.",
         "memory_l": "Ada Stone is recovering from a knee injury and must rest it.",
         "query_type": "Recommendation", "category": "State Constraint",
         "query": "Can you suggest a hard mountain hike for this weekend?",
         "options": options},
    ]  # fmt: skip
    (folder / "qa_user90.json").write_text(json.dumps(rows))
    other = [dict(rows[0], memory_s="Bo Lind likes jazz bars.", query="Any jazz bar ideas?")]
    (folder / "qa_user91.json").write_text(json.dumps(other))
    return folder


def test_bench_imlogic_smoke(tmp_path: Path) -> None:
    from ripplegraph.agent.eval.imlogic import load_imlogic

    data = write_imlogic(tmp_path / "imlogic")
    loaded = load_imlogic(data)
    assert loaded.counts == {"users": 2, "memories": 6, "questions": 3}
    speakers = {t.speaker for s in loaded.sessions["imlogic-user90"] for t in s.turns}
    assert speakers == {"Ada Stone"}
    out = tmp_path / "out.json"
    args = ["bench", "imlogic", "--data", str(data), "--store", str(tmp_path / "store"),
            "--results", str(tmp_path / "r"), "--out", str(out)]  # fmt: skip
    run = CliRunner().invoke(app, args)
    assert run.exit_code == 0, run.output
    summary = json.loads(out.read_text())
    assert set(summary["systems"]) >= {"dense", "ripplegraph", "no_roots", "no_counterfactual"}
    for name, scores in summary["systems"].items():
        assert set(scores["overall"]) == {"R@5", "R@10", "R@20", "R@30", "above_distractor"}
        assert {"Resource Constraint", "State Constraint", "Advice"} <= set(scores)
        # Two to four memories per user: every ranking system holds memory_l in its top 5,
        # and under the distractor that shares the question's words; BM25 ranks only
        # memories sharing a word with the question, and memory_l shares none.
        expected = (0.0, 0.0) if name == "bm25" else (1.0, 0.0)
        assert (scores["overall"]["R@5"], scores["overall"]["above_distractor"]) == expected
    assert (tmp_path / "r" / "bench_imlogic.md").read_text().startswith("| system |")
    assert (tmp_path / "r" / "bench_imlogic.png").stat().st_size > 1000
    missing = CliRunner().invoke(app, ["bench", "imlogic", "--data", str(tmp_path / "none")])
    assert missing.exit_code == 2 and "cannot read IMLogic data" in missing.output


def test_bench_imlogic_with_a_model_scores_its_choices(tmp_path: Path) -> None:
    import re

    from tests.openai_server import Reply, Request, ScriptedOpenAI

    data = write_imlogic(tmp_path / "imlogic")
    correct = "Hold off: your income is zero right now."
    fabrication = "Yes, your promotion pays for it."

    def chooser(request: Request) -> Reply:
        # Picks the correct option when the logical memory was recalled, else the fabrication.
        options = dict(re.findall(r'<option letter="([A-D])">([^<]*)</option>', request.user))
        want = correct if "monthly_income" in request.user else fabrication
        letter = next(k for k, v in options.items() if v.replace("&#x27;", "'") == want)
        return Reply(json.dumps({"choice": letter, "reason": "scripted"}))

    server = ScriptedOpenAI(chooser)
    try:
        out = tmp_path / "out.json"
        args = ["bench", "imlogic", "--data", str(data), "--store", str(tmp_path / "store"),
                "--results", str(tmp_path / "r"), "--out", str(out), "--no-charts",
                "--systems", "bm25,dense", "--llm", "scripted",
                "--base-url", server.url]  # fmt: skip
        run = CliRunner().invoke(app, args)
        assert run.exit_code == 0, run.output
    finally:
        server.close()
    summary = json.loads(out.read_text())
    assert server.calls("choice") == 2 * 3
    # Dense recalls every user's memories in its top 30, the income memory among them, so
    # the script picks the correct option; BM25 recalls no memory_l, so it picks the trap.
    assert summary["systems"]["dense"]["overall"]["accuracy"] == 1.0
    assert summary["systems"]["dense"]["answers"]["Correct"] == 3
    bm25 = summary["systems"]["bm25"]
    assert bm25["answers"]["Trap_Fabrication"] == bm25["answers"]["wrong"] == 3
    assert bm25["overall"]["accuracy"] == 0.0
    shuffled = {r.user.split("<options>")[1][:40] for r in server.requests}
    assert len(shuffled) > 1  # options are shuffled per question
    assert "accuracy" in (tmp_path / "r" / "bench_imlogic.md").read_text()
