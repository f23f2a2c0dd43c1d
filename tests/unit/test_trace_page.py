"""The trace page, built from a recall state by hand: content, safety, size (no browser)."""

from __future__ import annotations

import base64
import hashlib
import re
from datetime import datetime

from ripplegraph.agent.graph import recall_graph
from ripplegraph.agent.memory import MemoryUnit, Provenance
from ripplegraph.agent.state import (
    Budget,
    Evidence,
    EvidenceSource,
    Plan,
    RecallState,
    RootUnit,
    TraceEvent,
)
from ripplegraph.agent.surfaces.trace_page import SCRIPT, STYLE, Visit, render_page, walk_steps
from ripplegraph.agent.surfaces.trace_page.sections import evidence_html

LIMITS = {"rounds": 1, "hops": 2, "refinements": 1, "llm_calls": 6, "tokens": 16000}
HOSTILE = '</td></details><script>alert("pwned")</script><img src="http://evil.test/x.png">'


def unit(mid: str, text: str) -> MemoryUnit:
    return MemoryUnit(
        id=mid,
        namespace="ns",
        text=text,
        provenance=Provenance(session_id="s1", session_time=datetime(2024, 5, 1)),
    )


def evidence(mid: str, text: str, *sources: EvidenceSource, anchor: bool = False) -> Evidence:
    return Evidence(
        memory=unit(mid, text),
        sources=list(sources),
        anchor=anchor,
        score=0.5,
        score_parts={"alignment": 0.2, "query": 0.25, "path": 0.2, "anchor": 0.05},
    )


def event(node: str, decision: str, **extra: object) -> TraceEvent:
    return TraceEvent(node=node, decision=decision, reason=f"{node} because", budget={}, **extra)  # type: ignore[arg-type]


def state(n_extra: int = 0) -> RecallState:
    anchor = evidence(
        "m_anchor",
        "Alex: Sam recommended Harbor Grill.",
        EvidenceSource(channel="semantic", rank=1, score=0.7),
        anchor=True,
    )
    allergy = evidence(
        "m_allergy",
        "Alex: Maya is allergic to seafood.",
        EvidenceSource(channel="root", rank=1, score=0.4, path=["root_1"]),
        EvidenceSource(channel="counterfactual", rank=1, score=0.3, path=["risk 1"]),
    )
    expanded = evidence(
        "m_far",
        "Alex: Harbor Grill is a seafood place.",
        EvidenceSource(
            channel="expansion",
            rank=1,
            score=0.3,
            path=["m_anchor", "m_mid", "m_far"],
            edges=["structural", "semantic"],
            round=1,
        ),
    )
    caused = evidence(
        "m_effect",
        "Alex: Maya's throat swelled up.",
        EvidenceSource(
            channel="counterfactual",
            rank=2,
            score=0.9,
            path=["risk 1", "m_allergy"],
            edges=["causal"],
        ),
    )
    hostile = evidence("m_hostile", HOSTILE, EvidenceSource(channel="lexical", rank=2, score=1.0))
    filler = [
        evidence(
            f"m_{i}",
            f"Alex: filler memory number {i} " * 8,
            EvidenceSource(channel="semantic", rank=i + 2, score=0.1),
        )
        for i in range(n_extra)
    ]
    items = [anchor, allergy, expanded, caused, hostile, *filler]
    trace = [
        event("first_hop_recall", "recalled", added=["m_anchor", "m_hostile"]),
        event(
            "route_root_memories",
            "activated 1 of 1",
            added=["m_allergy"],
            details={
                "llm": {
                    "role": "root_router",
                    "calls": 1,
                    "tokens": 812,
                    "fallback": False,
                    "note": "",
                }
            },
        ),
        event(
            "check_sufficiency",
            "expand",
            details={
                "missing": ["seafood"],
                "llm": {
                    "role": "controller",
                    "calls": 2,
                    "tokens": 1500,
                    "fallback": True,
                    "note": "invalid JSON twice",
                },
            },
        ),
        event("plan_recollection", "planned"),
        event("expand_locally", "round 1: 1 new memories", added=["m_far"]),
        event("check_sufficiency", "stop"),
        event("assemble_evidence", f"kept {len(items)} of {len(items)}"),
    ]
    return RecallState(
        query="Should we go to Harbor Grill for Maya's birthday dinner?",
        namespace="ns",
        evidence=items,
        pool={item.memory.id: item for item in items},
        roots=[
            RootUnit(
                id="root_1",
                rule="Respect Maya's allergy.",
                person="Maya",
                topic="constraints",
                evidence_ids=["m_allergy"],
            )
        ],
        counterfactuals=["If the user goes ahead: Maya is allergic to seafood."],
        plan=Plan(anchors=["m_anchor"], target="seafood"),
        stop_reason="sufficient",
        budget=Budget(
            rounds=1, hops=2, llm_calls=3, tokens=2312, limits={**LIMITS, "evidence_k": 30}
        ),
        trace=trace,
    )


def test_visits_number_every_run_of_a_node_and_every_transition() -> None:
    visit = Visit.of(state().trace)
    assert visit.steps["check_sufficiency"] == [3, 6]
    assert visit.transitions[("__start__", "first_hop_recall")] == [1]
    assert visit.transitions[("expand_locally", "check_sufficiency")] == [6]
    assert visit.transitions[("assemble_evidence", "__end__")] == [8]


def test_walks_type_each_edge_and_start_at_the_search_that_found_them() -> None:
    item = state().pool
    assert walk_steps(item["m_far"].sources[0], "m_far") == [
        ("m_anchor", "m_mid", "structural"),
        ("m_mid", "m_far", "semantic"),
    ]
    assert walk_steps(item["m_effect"].sources[0], "m_effect") == [
        ("risk 1", "m_allergy", "risk"),
        ("m_allergy", "m_effect", "causal"),
    ]
    assert walk_steps(item["m_allergy"].sources[0], "m_allergy") == [
        ("root_1", "m_allergy", "root")
    ]
    assert walk_steps(item["m_anchor"].sources[0], "m_anchor") == []


def test_page_shows_path_steps_evidence_neighbourhood_roots_and_risks() -> None:
    page = render_page(state(), recall_graph.get_graph(), thread_id="t-1")
    for node in (
        "first_hop_recall",
        "route_root_memories",
        "check_sufficiency",
        "plan_recollection",
        "expand_locally",
        "assemble_evidence",
    ):
        assert f'data-node="{node}"' in page
    # check_sufficiency ran twice: both visits are numbered on the machine.
    machine = page[page.index('<svg id="machine"') : page.index("</svg>")]
    check = machine[machine.index('data-node="check_sufficiency"') :]
    check = check[: check.index("</g>")]
    assert re.findall(r'class="badge-text"[^>]*>(\d+)<', check) == ["3", "6"]
    assert 'class="medge taken' in machine
    assert page.count('<details class="step"') == 7
    assert "Maya is allergic to seafood." in page
    assert "t-1" in page and "sufficient" in page
    # ρ and its parts, the sources and the typed walk of the expanded memory.
    assert "<b>0.500</b>" in page and ">0.250<" in page and ">0.050<" in page
    assert "expansion #1 (0.30) round 1" in page
    assert "—structural→" in page and "—semantic→" in page and "—causal→" in page
    # The neighbourhood: roots, risks, anchors, the memory passed on a path, typed links.
    hood = page[page.index('<svg id="neighbourhood"') :]
    hood = hood[: hood.index("</svg>")]
    assert "root: Maya / constraints" in hood and "risk 1:" in hood
    assert 'data-mid="m_mid"' in hood and "not kept in the pool" in hood
    for colour in ("#2f6fdb", "#1f9d55", "#d64545", "#8a4fd8", "#e07b00"):
        assert f'stroke="{colour}"' in hood
    assert "Respect Maya&#x27;s allergy." in page


def test_a_learned_score_says_why_in_its_strongest_features() -> None:
    explained = evidence("m_1", "Alex: Maya loves oysters.").model_copy(
        update={
            "score": 1.25,
            "score_parts": {
                "alignment": 0.4,
                "learned:alignment_below_best": -0.41,
                "learned:beside_head": 0.3,
            },
        }
    )
    html = evidence_html([explained], {})
    assert "<b>1.250</b>" in html and "learned: why" in html
    assert "alignment_below_best -0.41<br>beside_head +0.30" in html


def test_model_calls_show_their_role_tokens_and_fallback() -> None:
    page = render_page(state(), recall_graph.get_graph())
    assert "role <b>root_router</b> · 1 call(s) · 812 tokens" in page
    assert "role <b>controller</b> · 2 call(s) · 1500 tokens" in page
    assert "fell back to the offline policy" in page and "invalid JSON twice" in page
    assert page.count('class="llm') == 2


def test_page_is_self_contained_and_memory_text_stays_inert() -> None:
    page = render_page(state(), recall_graph.get_graph())
    assert page.count("<script>") == 1 and page.count("<style>") == 1
    assert "<img" not in page and "alert(&quot;pwned&quot;)" in page
    # The only URL on the page is the hostile memory's, quoted as text.
    assert "&lt;img src=&quot;http://evil.test/x.png&quot;&gt;" in page
    assert not re.search(
        r"https?://", page.replace("http://evil.test", "").replace("http-equiv", "")
    )
    assert not re.search(r"\b(?:src|href)=[\"']", page)
    assert "@import" not in page and "url(" not in page.replace("url(#arrow", "")
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None
    for block in (STYLE, SCRIPT):
        digest = base64.b64encode(hashlib.sha256(block.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in policy.group(1)
    assert "default-src 'none'" in policy.group(1)
    assert "unsafe-inline" not in policy.group(1)


def test_a_thirty_memory_recall_is_small() -> None:
    page = render_page(state(n_extra=25), recall_graph.get_graph())
    assert len(state(n_extra=25).evidence) == 30
    assert len(page.encode("utf-8")) < 200_000
