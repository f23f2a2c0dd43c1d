"""Advice questions recall the disclosure they depend on (ActMem-style scenarios).

Fourteen scenarios of ``tests/scenarios/advice.json``: a first-person disclosure among about
250 turns of real user–assistant chat and six other disclosures of the same user, and a
question that does not name it; in four, a newer state overrides an older one.  Offline, the
decisive memory must be in the top 10 of the full graph's evidence, as a standing fact in
view; a superseded one must not be lifted.  With the scripted model, the counterfactual
role's risk and the root router's choice each reach a disclosure by a path no similarity
gives (a dessert is sugar, sugar matters to a diabetic).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

from ripplegraph.agent.context import Deployed
from ripplegraph.agent.services import Services
from ripplegraph.agent.state import RecallOutput, risk_label
from ripplegraph.agent.surfaces.api import recall, remember
from tests.advice_scenarios import NOISE, Scenario, scenarios
from tests.conftest import deployed
from tests.openai_server import Reply, Request, ScriptedOpenAI

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not NOISE.exists(), reason=f"scenario noise data missing: {NOISE}"),
]
SCENARIOS = scenarios() if NOISE.exists() else []


@pytest.fixture(scope="module")
def scenario_store(tmp_path_factory: pytest.TempPathFactory) -> Deployed:
    """Every scenario ingested offline into its own namespace of one store."""
    context = deployed(store_dir=str(tmp_path_factory.mktemp("advice") / "store"))
    for scenario in SCENARIOS:
        remember(scenario.sessions, f"advice-{scenario.name}", context)
    return context


def ask(
    context: Deployed, scenario: Scenario, recipe: str = "full", **settings: object
) -> tuple[RecallOutput, str]:
    namespace = f"advice-{scenario.name}"
    run = deployed(store_dir=context.deployment.store_dir, recall_recipe=recipe, **settings)
    units = Services(context.deployment).store().all_units(namespace)
    decisive = next(u.id for u in units if scenario.decisive in u.provenance.turn_ids)
    return recall(scenario.question, namespace, run), decisive


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_the_decisive_disclosure_is_in_the_top_10(
    scenario_store: Deployed, scenario: Scenario
) -> None:
    result, decisive = ask(scenario_store, scenario)
    top = [e.memory.id for e in result.evidence[:10]]
    assert decisive in top, f"{scenario.question!r}: decisive memory not in the top 10"
    refined = next(e for e in result.trace if e.node == "refine_counterfactually")
    assert decisive in refined.details["lifted"] + refined.details["already_in_view"]
    if scenario.superseded:
        old = next(
            u.id
            for u in Services(scenario_store.deployment)
            .store()
            .all_units(f"advice-{scenario.name}")
            if scenario.superseded in u.provenance.turn_ids
        )
        assert not any(e.standing for e in result.evidence if e.memory.id == old)
        assert refined.details["superseded"].get(old) == decisive


def test_the_counterfactual_step_is_what_finds_them(scenario_store: Deployed) -> None:
    """Without it, at least four more decisive memories fall out of the top 10."""
    found = {"full": 0, "no_counterfactual": 0}
    for scenario in SCENARIOS:
        for recipe in found:
            result, decisive = ask(scenario_store, scenario, recipe)
            found[recipe] += decisive in [e.memory.id for e in result.evidence[:10]]
    assert found["full"] == len(SCENARIOS)
    assert found["no_counterfactual"] <= found["full"] - 4


_RULE = re.compile(r'<rule id="([^"]+)"[^>]*>([^<]*)</rule>')


def scripted(risks: list[str], route_to: str = "") -> Callable[[Request], Reply]:
    """A model that states ``risks`` and activates the units whose rule mentions ``route_to``."""

    def script(request: Request) -> Reply:
        if request.role == "counterfactual":
            return Reply(json.dumps({"risks": risks}))
        if request.role == "root_router":
            chosen = [
                uid for uid, rule in _RULE.findall(request.user) if route_to and route_to in rule
            ]
            return Reply(json.dumps({"active": chosen, "reason": "the request bears on health"}))
        return Reply(json.dumps({"decision": "stop", "reason": "the evidence is enough"}))

    return script


def with_model(server: ScriptedOpenAI) -> dict[str, object]:
    return {"model": "scripted-model", "base_url": server.url, "backoff_seconds": 0.01}


def test_the_models_risk_reaches_what_no_rule_could(
    scenario_store: Deployed, serve: Callable[..., ScriptedOpenAI]
) -> None:
    """The risk "a dessert spikes blood sugar", a second query, reaches the diagnosis."""
    [scenario] = [s for s in SCENARIOS if s.name == "diabetes"]
    risk = "A sugary dessert could spike blood sugar for someone with type 2 diabetes."
    server = serve(scripted([risk]))
    result, decisive = ask(scenario_store, scenario, **with_model(server))
    assert decisive in [e.memory.id for e in result.evidence[:10]]
    found = next(e for e in result.evidence if e.memory.id == decisive)
    assert found.standing
    assert risk_label(0) in {s.path[0] for s in found.sources if s.channel == "counterfactual"}
    assert server.calls("counterfactual") == 1


def test_the_root_routers_choice_puts_its_units_evidence_in_the_top_10(
    scenario_store: Deployed, serve: Callable[..., ScriptedOpenAI]
) -> None:
    """Counterfactual refinement off: the unit the model routes to is what brings it."""
    [scenario] = [s for s in SCENARIOS if s.name == "diabetes"]
    offline, decisive = ask(scenario_store, scenario, "no_counterfactual")
    assert decisive not in [e.memory.id for e in offline.evidence[:10]]
    server = serve(scripted([], route_to="diabetes"))
    result, _ = ask(scenario_store, scenario, "no_counterfactual", **with_model(server))
    assert decisive in [e.memory.id for e in result.evidence[:10]]
    found = next(e for e in result.evidence if e.memory.id == decisive)
    assert "root" in {s.channel for s in found.sources} and found.standing
    routed = next(e for e in result.trace if e.node == "route_root_memories")
    assert routed.reason.startswith("LLM router")
