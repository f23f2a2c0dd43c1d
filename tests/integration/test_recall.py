"""The recall state machine on the demo store: every route, budgets, the must-show scenario."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import HumanMessage

import ripplegraph.nodes.check_sufficiency as check_node
from ripplegraph.agent.context import Deployed
from ripplegraph.agent.decisions.policies.assembly import score
from ripplegraph.agent.decisions.policies.sufficiency import NOTHING_TO_FIND, OWN_DECISION, Verdict
from ripplegraph.agent.graph import build_chat_graph, recall_graph
from ripplegraph.agent.recall_config import FULL, RecipeName
from ripplegraph.agent.services import Services
from ripplegraph.agent.state import RecallInput, RecallOutput
from ripplegraph.agent.surfaces.checkpointing import memory_saver
from ripplegraph.studio import DEMO_NAMESPACE
from tests.conftest import adjusted

pytestmark = pytest.mark.integration
HARBOR = "Should we go to Harbor Grill for Maya's birthday dinner?"
MUGS = "How much did each mug I gave my team cost?"
MOCHI = "Who can look after Mochi if we take the weekend trip to the coast?"
ALLERGY_Q = "What is Maya allergic to?"


def run(
    context: Deployed, query: str, recall_recipe: RecipeName | None = None, **limits: int
) -> RecallOutput:
    ctx = adjusted(context, **limits)
    if recall_recipe is not None:
        ctx = ctx.model_copy(update={"recall_recipe": recall_recipe})
    raw = recall_graph.invoke(RecallInput(query=query, namespace=DEMO_NAMESPACE), context=ctx)
    return RecallOutput.model_validate(raw)


def every_round(context: Deployed) -> Deployed:
    """The full graph taking every round it may, findable or not (``only_findable=False``)."""
    return context.model_copy(update={"recall_settings": replace(FULL, only_findable=False)})


def nodes_run(result: RecallOutput) -> list[str]:
    return [event.node for event in result.trace]


def allergy(result: RecallOutput) -> list[Any]:
    return [e for e in result.evidence if "allergic to seafood" in e.memory.text]


def test_allergy_is_recalled_beyond_the_first_hop(demo_context: Deployed) -> None:
    """With the paper's first hop (10/5/5), similarity misses it.

    A decision question gathers a pool of 2K, so K = 10 keeps the first hop at 10/5/5.  At
    K = 20 it widens to 20/10/10, 40% of this 50-turn history, and the allergy's turn enters
    it by similarity alone.
    """
    demo_context = adjusted(demo_context, evidence_k=10)
    full = run(demo_context, HARBOR)
    found = allergy(full)
    assert found, "the allergy memory must be in the evidence"
    channels = {s.channel for s in found[0].sources}
    assert channels & {"root", "expansion", "counterfactual"}
    assert not channels & {"semantic", "lexical", "cue"}, "not reached by the first hop"
    first_hop_ids = full.trace[0].added
    assert found[0].memory.id not in first_hop_ids
    routed = next(e for e in full.trace if e.node == "route_root_memories")
    assert found[0].memory.id in routed.added or "counterfactual" in channels
    assert "Maya" in routed.reason
    plain = run(demo_context, HARBOR, recall_recipe="first_hop")
    assert not allergy(plain)


def test_a_covered_question_is_recollected_once_then_stops(demo_context: Deployed) -> None:
    result = run(demo_context, MOCHI)
    assert nodes_run(result) == [
        "first_hop_recall",
        "route_root_memories",
        "check_sufficiency",
        "plan_recollection",
        "expand_locally",
        "check_sufficiency",
        "assemble_evidence",
    ]
    checks = [e for e in result.trace if e.node == "check_sufficiency"]
    assert checks[0].reason == "covered, but not yet recollected around it"
    assert result.stop_reason == "sufficient"
    assert any("Luna's pottery studio" in e.memory.text for e in result.evidence)
    direct = run(demo_context, MOCHI, rounds=0)
    assert nodes_run(direct) == [
        "first_hop_recall",
        "route_root_memories",
        "check_sufficiency",
        "assemble_evidence",
    ]
    assert direct.stop_reason.startswith("recollection rounds spent (0 of 0)")
    assert any("Luna's pottery studio" in e.memory.text for e in direct.evidence)


def test_expand_then_stop(demo_context: Deployed) -> None:
    result = run(every_round(demo_context), MUGS)
    assert nodes_run(result)[2:5] == ["check_sufficiency", "plan_recollection", "expand_locally"]
    assert result.budget.rounds == result.budget.limits["rounds"] == 2
    assert result.budget.hops == 2 * 2, "two hops in each of the two rounds"
    expansion = [e for e in result.evidence if any(s.channel == "expansion" for s in e.sources)]
    assert expansion and all(
        len(s.path) >= 2 for e in expansion for s in e.sources if s.channel == "expansion"
    )
    assert sum(e.anchor for e in result.evidence) <= 3 * 2, "three anchors a round at most"
    texts = " ".join(e.memory.text for e in result.evidence)
    assert "$60 in total" in texts and "five of them" in texts


def test_no_further_round_for_what_no_memory_holds(demo_context: Deployed) -> None:
    """No memory says "gave" or "cost" ("handed out", "$60"): one round, then a stop."""
    store = Services(demo_context.deployment).store()
    assert store.held_terms(DEMO_NAMESPACE, ["gave", "cost", "mug"]) == ["mug"]
    result = run(demo_context, MUGS)
    checks = [e for e in result.trace if e.node == "check_sufficiency"]
    assert [(c.decision, c.details["missing"]) for c in checks] == [
        ("expand", ["gave", "cost"]),
        ("stop", ["gave", "cost"]),
    ]
    assert checks[-1].reason == f"not covered: gave, cost — {NOTHING_TO_FIND}"
    assert result.stop_reason == NOTHING_TO_FIND
    assert result.budget.rounds == 1 and result.budget.limits["rounds"] == 2
    texts = " ".join(e.memory.text for e in result.evidence)
    assert "$60 in total" in texts and "five of them" in texts


def test_a_decision_of_the_askers_own_is_recollected_once(demo_context: Deployed) -> None:
    """Missing support some memory holds would take a second round, but not for "should we…"."""
    question = "Should I buy more mugs at the farmers market for the running club?"
    result = run(demo_context, question)
    checks = [e for e in result.trace if e.node == "check_sufficiency"]
    assert [c.decision for c in checks] == ["refine", "expand", "stop"]
    missing = checks[-1].details["missing"]
    store = Services(demo_context.deployment).store()
    assert store.held_terms(DEMO_NAMESPACE, missing) == ["club"], "some of it is findable"
    assert result.stop_reason == OWN_DECISION and result.budget.rounds == 1
    asked_again = demo_context.model_copy(
        update={"recall_settings": replace(FULL, own_decisions_once=False)}
    )
    assert run(asked_again, question).budget.rounds == 2


def test_budget_exhausted(demo_context: Deployed) -> None:
    result = run(demo_context, MUGS, rounds=0)
    assert "plan_recollection" not in nodes_run(result)
    assert result.stop_reason.startswith("recollection rounds spent (0 of 0)")
    assert result.budget.rounds == 0 and result.budget.limits["rounds"] == 0


def test_counterfactual_refinement_and_root_routing(demo_context: Deployed) -> None:
    result = run(demo_context, HARBOR)
    assert "refine_counterfactually" in nodes_run(result)
    assert result.budget.refinements == 1
    refine = next(e for e in result.trace if e.node == "refine_counterfactually")
    assert "no world knowledge was used" in refine.reason
    assert any(root.person == "Maya" for root in result.roots)
    assert result.context.startswith("<rules>")
    disabled = run(demo_context, HARBOR, recall_recipe="no_counterfactual")
    assert "refine_counterfactually" not in nodes_run(disabled)


def test_evidence_is_bounded_by_k_and_tokens(demo_context: Deployed) -> None:
    result = run(demo_context, HARBOR, evidence_k=3)
    assert len(result.evidence) == 3
    small = run(demo_context, HARBOR, context_tokens=200)
    assert sum(len(e.memory.text) // 4 + 13 for e in small.evidence) <= 200
    factual = run(demo_context, MUGS, evidence_k=5)
    assert [e.score for e in factual.evidence] == sorted(
        (e.score for e in factual.evidence), reverse=True
    )


class RandomController:
    """A controller that decides at random, to show the routers alone bound the machine."""

    def __init__(self, decisions: list[str]) -> None:
        self.decisions = iter(decisions)

    def decide(
        self,
        cues: Any,
        ranked: Any,
        *,
        refined: bool,
        can_refine: bool,
        expanded: bool,
        reachable: Any = None,
        own_decisions_once: bool = False,
    ) -> Verdict:
        decision = next(self.decisions, "expand")
        return Verdict(decision, ["anything"], "random")  # type: ignore[arg-type]


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    decisions=st.lists(st.sampled_from(["stop", "expand", "refine"]), max_size=12),
    rounds=st.integers(min_value=0, max_value=3),
    refinements=st.integers(min_value=0, max_value=2),
)
def test_machine_always_ends_within_the_step_bound(
    demo_context: Deployed,
    monkeypatch: pytest.MonkeyPatch,
    decisions: list[str],
    rounds: int,
    refinements: int,
) -> None:
    monkeypatch.setattr(check_node, "_policy", RandomController(decisions))
    bound = 4 + 3 * rounds + 2 * refinements  # first hop, roots, check, assemble + loops
    ctx = adjusted(demo_context, rounds=rounds, refinements=refinements)
    raw = recall_graph.invoke(
        RecallInput(query=MUGS, namespace=DEMO_NAMESPACE),
        context=ctx,
        config={"recursion_limit": bound + 1},
    )
    result = RecallOutput.model_validate(raw)
    assert len(result.trace) <= bound
    assert result.budget.rounds <= rounds and result.budget.refinements <= refinements
    assert result.trace[-1].node == "assemble_evidence"


def test_chat_recalls_responds_and_remembers(demo_context: Deployed) -> None:
    graph = build_chat_graph().compile(checkpointer=memory_saver())
    ctx = demo_context.model_copy(update={"namespace": DEMO_NAMESPACE, "user_name": "Alex"})
    store = Services(ctx.deployment).store()
    before = store.count_units(DEMO_NAMESPACE)
    out = graph.invoke(
        {"messages": [HumanMessage(content=HARBOR)]},
        context=ctx,
        config={"configurable": {"thread_id": "t1"}},
    )
    reply = out["messages"][-1].content
    assert "without a language model" in reply
    assert "allergic to seafood" in reply
    assert reply.index("allergic to seafood") < reply.index("Relevant memories")
    assert store.count_units(DEMO_NAMESPACE) == before + 1
    remembered = store.search_lexical(DEMO_NAMESPACE, "Harbor Grill birthday dinner", 3)
    assert any(
        store.get(DEMO_NAMESPACE, [mid])[mid].provenance.session_id.startswith("chat/")
        for mid, _ in remembered
    )


def test_every_recall_event_reports_the_budget_after_it(demo_context: Deployed) -> None:
    result = run(every_round(demo_context), MUGS)
    assert all(event.budget is not None for event in result.trace)
    first, last = [e for e in result.trace if e.node == "expand_locally"]
    assert first.budget == {"llm_calls": 0, "tokens": 0, "rounds": 1, "hops": 2, "refinements": 0}
    assert last.budget == {"llm_calls": 0, "tokens": 0, "rounds": 2, "hops": 4, "refinements": 0}
    assert result.trace[0].budget is not None and result.trace[0].budget["rounds"] == 0
    assert result.trace[-1].budget == last.budget


def test_evidence_is_aligned_with_what_the_question_asks_not_whom(
    demo_context: Deployed,
) -> None:
    """The cue channel matches "Maya" exactly; ρ's alignment measures the rest of the question."""
    demo_context = demo_context.model_copy(update={"recall_recipe": "hand_ranked"})
    result = run(demo_context, ALLERGY_Q, evidence_k=3)  # the score is ρ
    cues = result.trace[0].details["cues"]
    assert cues["people"] == ["maya"]
    assert cues["content"] == "What is allergic to?"
    assert allergy(result) and result.evidence[0] is allergy(result)[0]
    store = Services(demo_context.deployment).store()
    vectors = store.embeddings(DEMO_NAMESPACE, [e.memory.id for e in result.evidence])
    config = demo_context.recall_config()
    for question, should_match in (("What is allergic to?", True), (ALLERGY_Q, False)):
        aligned = [
            round(score(e, float(vectors[e.memory.id] @ store.embedder.query(question)), config), 6)
            for e in result.evidence
        ]
        rho = [round(e.score, 6) for e in result.evidence]
        assert (aligned == rho) is should_match, question
