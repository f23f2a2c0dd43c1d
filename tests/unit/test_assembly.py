"""ρ, ranking and budgeted selection (RippleMem §2.4), term by term, without the embedding model."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from ripplegraph.agent.decisions.policies.assembly import (
    rank,
    rank_pool,
    score,
    score_parts,
    select,
    total,
)
from ripplegraph.agent.memory import MemoryUnit, Provenance
from ripplegraph.agent.models.llm import estimate_tokens
from ripplegraph.agent.models.providers import Embedder
from ripplegraph.agent.recall_config import FULL
from ripplegraph.agent.state import Channel, Evidence, EvidenceSource
from ripplegraph.agent.store import MemoryStore


def unit(mid: str, text: str = "a memory", session: str = "s1") -> MemoryUnit:
    return MemoryUnit(id=mid, namespace="ns", text=text, provenance=Provenance(session_id=session))


def evidence(
    mid: str,
    *sources: tuple[Channel, int],
    anchor: bool = False,
    standing: bool = False,
    text: str = "",
    session: str = "s1",
    rho: float = 0.0,
) -> Evidence:
    return Evidence(
        memory=unit(mid, text or f"memory {mid}", session),
        score=rho,
        sources=[EvidenceSource(channel=c, rank=r, score=0.0) for c, r in sources],
        anchor=anchor,
        standing=standing,
    )


def test_each_term_of_rho() -> None:
    item = evidence("m", ("semantic", 1), ("expansion", 3), anchor=True)
    parts = score_parts(item, 0.4, FULL)
    assert parts == pytest.approx(
        {
            "alignment": 0.4,
            "query": 1.25 * 0.4,
            "path": 1.0 * (1.0 / (5 + 1) + 0.85 / (5 + 3)),
            "anchor": 0.05,
            "standing": 0.0,
        }
    )
    assert total(parts) == pytest.approx(parts["query"] + parts["path"] + parts["anchor"])
    assert score(item, 0.4, FULL) == pytest.approx(total(parts))
    lifted = score_parts(evidence("m", ("counterfactual", 1), standing=True), 0.1, FULL)
    assert lifted["standing"] == FULL.lambda_standing
    assert total(lifted) == pytest.approx(1.25 * 0.1 + 0.85 / 6 + FULL.lambda_standing)


def test_alignment_is_floored_at_zero_and_every_channel_weighs_in() -> None:
    item = evidence("m", ("lexical", 2), ("cue", 1), ("root", 4), ("counterfactual", 5))
    parts = score_parts(item, -0.3, FULL)
    assert parts["alignment"] == -0.3 and parts["query"] == 0.0 and parts["anchor"] == 0.0
    assert parts["path"] == pytest.approx(0.75 / 7 + 0.9 / 6 + 0.9 / 9 + 0.85 / 10)
    assert score_parts(evidence("m"), 0.0, FULL)["path"] == 0.0


def test_rank_orders_by_rho_then_id_and_records_the_terms() -> None:
    pool = {
        "b": evidence("b", ("semantic", 1)),
        "a": evidence("a", ("semantic", 1)),  # ties with b: id order
        "c": evidence("c", ("lexical", 9)),
        "d": evidence("d", ("semantic", 2)),  # no vector: alignment 0
    }
    query = np.array([1.0, 0.0], dtype=np.float32)
    vectors = {mid: np.array([0.6, 0.8], dtype=np.float32) for mid in "abc"}
    ranked = rank(pool, query, vectors, FULL)
    assert [e.memory.id for e in ranked] == ["a", "b", "c", "d"]
    first = ranked[0]
    assert first.score_parts["alignment"] == pytest.approx(0.6)
    assert first.score == pytest.approx(1.25 * 0.6 + 1.0 / 6, abs=1e-6)
    terms = sum(first.score_parts[k] for k in ("query", "path", "anchor"))
    assert first.score == pytest.approx(terms, abs=1e-6)
    assert ranked[3].score_parts["alignment"] == 0.0
    assert ranked[3].score == pytest.approx(1.0 / 7, abs=1e-6)
    assert all(v == round(v, 6) for e in ranked for v in [e.score, *e.score_parts.values()])
    assert pool["a"].score == 0.0  # the pool itself is not changed


def test_rank_pool_aligns_the_stored_vectors_with_the_query(tmp_path: Path) -> None:
    embeddings = DeterministicFakeEmbedding(size=16)
    store = MemoryStore(tmp_path / "store", Embedder(embeddings))
    texts = {"m1": "Maya is allergic to seafood", "m2": "Harbor Grill serves oysters"}
    store.add_units([unit(mid, text) for mid, text in texts.items()])
    store.close()
    store = MemoryStore(tmp_path / "store", Embedder(embeddings))  # vectors come from Chroma
    pool = {mid: evidence(mid, ("semantic", 1), text=text) for mid, text in texts.items()}
    ranked = rank_pool(store, "ns", "where to eat with Maya", pool, FULL)
    query = np.asarray(embeddings.embed_query("where to eat with Maya"))
    for item in ranked:
        memory = np.asarray(embeddings.embed_documents([texts[item.memory.id]])[0])
        cosine = memory @ query / (np.linalg.norm(memory) * np.linalg.norm(query))
        assert item.score_parts["alignment"] == pytest.approx(cosine, abs=1e-5)
    store.close()


def test_a_pool_ranked_again_unchanged_is_not_ranked_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MemoryStore(tmp_path / "store", Embedder(DeterministicFakeEmbedding(size=16)))
    texts = {"m1": "Maya is allergic to seafood", "m2": "Harbor Grill serves oysters"}
    store.add_units([unit(mid, text) for mid, text in texts.items()])
    pool = {mid: evidence(mid, ("semantic", 1), text=text) for mid, text in texts.items()}
    read: list[list[str]] = []
    stored = store.embeddings
    monkeypatch.setattr(store, "embeddings", lambda ns, ids: read.append(ids) or stored(ns, ids))
    first = rank_pool(store, "ns", "where to eat with Maya", pool, FULL)
    again = rank_pool(store, "ns", "where to eat with Maya", dict(pool), FULL)
    assert again == first and again is not first and len(read) == 1  # same items: not again
    anchored = {**pool, "m2": pool["m2"].model_copy(update={"anchor": True})}
    moved = rank_pool(store, "ns", "where to eat with Maya", anchored, FULL)
    assert len(read) == 2 and moved != first  # an item replaced: ranked again
    vectors = stored("ns", list(pool))
    query = store.embedder.query("where to eat with Maya")
    assert moved == rank(anchored, query, vectors, FULL)
    rank_pool(store, "ns", "Maya's allergies", pool, FULL)
    rank_pool(store, "ns", "where to eat with Maya", pool, replace(FULL, rank_offset=9))
    assert len(read) == 4  # another question, other settings: ranked again
    store.close()


def test_a_grown_pool_scores_only_what_is_new_or_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MemoryStore(tmp_path / "store", Embedder(DeterministicFakeEmbedding(size=16)))
    texts = {
        "m1": "Maya is allergic to seafood",
        "m2": "Harbor Grill serves oysters",
        "m3": "Maya booked a table for Friday",
        "code": "Order mk3f9a was for the Harbor Grill",
    }
    store.add_units([unit(mid, text) for mid, text in texts.items()])
    read: list[list[str]] = []
    stored = store.embeddings
    monkeypatch.setattr(store, "embeddings", lambda ns, ids: read.append(ids) or stored(ns, ids))
    query = "where to eat with Maya, order mk3f9a"
    pool = {
        "m1": evidence("m1", ("semantic", 1), text=texts["m1"]),
        "code": evidence("code", ("exact", 1), text=texts["code"]),
    }
    first = rank_pool(store, "ns", query, pool, FULL)
    grown = {
        **pool,
        "m2": evidence("m2", ("expansion", 1), text=texts["m2"]),
        "m3": evidence("m3", ("expansion", 2), text=texts["m3"]),
    }
    ranked = rank_pool(store, "ns", query, grown, FULL)
    assert read[-1] == ["code", "m2", "m3"], "m1 keeps its score; the named memory is lifted anew"
    kept = {e.memory.id: e for e in first}["m1"]
    assert {e.memory.id: e for e in ranked}["m1"] is kept
    vectors = stored("ns", list(grown))
    assert ranked == rank(grown, store.embedder.query(query), vectors, FULL)
    assert ranked[0].memory.id == "code"
    assert ranked[0].score_parts["named"] == pytest.approx(ranked[1].score, abs=1e-5)
    store.close()


def test_select_keeps_the_top_k_that_fit_and_skips_a_long_item() -> None:
    short = [evidence(f"s{i}", text="x" * 40) for i in range(4)]  # 11 + 12 = 23 tokens each
    long = evidence("long", text="y" * 400)  # 101 + 12 tokens
    cost = estimate_tokens("x" * 40) + 12
    assert cost == 23
    ranked = [short[0], long, short[1], short[2], short[3]]
    assert [e.memory.id for e in select(ranked, 3, 100)] == ["s0", "s1", "s2"]
    assert [e.memory.id for e in select(ranked, 2, 1000)] == ["s0", "long"]
    assert [e.memory.id for e in select(ranked, 10, 3 * cost)] == ["s0", "s1", "s2"]  # exact fit
    assert [e.memory.id for e in select(ranked, 10, 3 * cost - 1)] == ["s0", "s1"]
    assert select(ranked, 0, 1000) == []


def test_a_memory_the_question_names_is_lifted_above_every_other() -> None:
    pool = {
        "close": evidence("close", ("semantic", 1), ("lexical", 2), ("cue", 1), anchor=True),
        "named": evidence("named", ("exact", 1), ("semantic", 9)),
        "far": evidence("far", ("semantic", 8)),
    }
    vectors = {
        "close": np.array([1.0, 0.0]),
        "named": np.array([0.2, 1.0]),
        "far": np.array([0.5, 0.5]),
    }
    ranked = rank(pool, np.array([1.0, 0.0]), vectors, FULL)
    assert [e.memory.id for e in ranked] == ["named", "close", "far"]
    named, close = ranked[0], ranked[1]
    assert named.score_parts["named"] == pytest.approx(close.score, abs=1e-5)
    assert named.score == pytest.approx(total(named.score_parts), abs=1e-5)
    assert "named" not in close.score_parts
    alone = rank({"named": pool["named"]}, np.array([1.0, 0.0]), vectors, FULL)
    assert alone[0].score_parts["named"] == 0.0, "nothing else to rise above"
