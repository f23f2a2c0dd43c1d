"""The learned ranker, trained on the development conversations and scored out of sample.

Recall's pool does not depend on the ranker (it orders the pool only as evidence is
assembled), so each question's final pool is captured once, as assembly sees it, with every
candidate's features (``policies.ranking.FEATURES``) and whether it holds a gold turn.
LambdaRank (LightGBM, one-split trees: an additive model, ``agent.learned``) then trains on
those pools.  Leave one conversation out (scikit-learn's ``LeaveOneGroupOut``, the groups
being conversations): each conversation is ranked by the model trained on all the others, and
the real recall graph is run again on it with that model, so the out-of-sample numbers are
the graph's own, and the captured simulation is checked against them question by question.
The shipped model trains on every conversation.

A setting that changes the pool (one round instead of two, anchors not spread) is judged
here, not by ``bench folds``: under a variant every pool is captured, the hand-ranked graph
run and each fold's ranker trained and run with the setting changed, so the ranker it is
scored with was trained on the pools it gathers.

Training is deterministic (one thread, fixed seed, LightGBM's ``deterministic``), so the same
pools give the same file, byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ripplegraph.agent.context import Deployed
from ripplegraph.agent.decisions.policies.assembly import rank_pool, select
from ripplegraph.agent.decisions.policies.ranking import (
    FEATURES,
    candidates,
    learned_for,
    learned_order,
)
from ripplegraph.agent.eval.conversations import LocomoData
from ripplegraph.agent.eval.folds import Variant, _estimate, paired
from ripplegraph.agent.eval.locomo import run_locomo
from ripplegraph.agent.eval.metrics import all_at, mean, recall_at
from ripplegraph.agent.eval.systems import recipe_context
from ripplegraph.agent.learned import Ranker, from_stumps
from ripplegraph.agent.recall_config import FULL, RecallConfig
from ripplegraph.agent.services import Services
from ripplegraph.agent.state import QueryCues, RecallState
from ripplegraph.agent.surfaces.api import recall_state

K = 30
"""The evidence kept (RippleMem's K): what multi-hop All@30 counts."""
PARAMETERS: dict[str, Any] = {
    "objective": "lambdarank",
    "num_leaves": 2,
    "learning_rate": 0.05,
    "min_data_in_leaf": 50,
    "lambdarank_truncation_level": K,
    "max_bin": 63,
    "use_missing": False,
    "feature_pre_filter": False,
    "deterministic": True,
    "force_row_wise": True,
    "num_threads": 1,
    "seed": 7,
    "verbose": -1,
}
"""LambdaRank with one split a tree (an additive model), fixed before any fold was scored."""
ROUNDS = 300
GUARDS = (("single-hop", "R@10"), ("temporal", "R@10"), ("open-domain", "R@10"))


@dataclass
class Pool:
    """One question's final pool as assembly sees it: features, gold labels, turns."""

    namespace: str
    question: str
    category: str
    gold: list[str]
    items: list[Any]
    """The pool ranked by ρ (``Evidence``), which the table's rows follow."""
    matrix: np.ndarray
    labels: np.ndarray
    learned: bool
    """Whether the ranker orders it (``learned_for``); else ρ's order, ``items``, is kept."""


SHIPPED_SETTINGS = Variant("full", FULL, {})
"""The recall settings the package ships: what ``bench ranker`` judges unless told a variant."""


def under(context: Deployed, settings: RecallConfig, variant: Variant) -> Deployed:
    """The run context with ``settings`` and the variant's recall limits."""
    limits = context.recall.model_copy(update=variant.limits)
    return context.model_copy(update={"recall_settings": settings, "recall": limits})


def capture(
    data: LocomoData, context: Deployed, advance: Callable[[], None] = lambda: None
) -> list[Pool]:
    """Every question's final pool, run through the real recall graph (its settings' pool)."""
    store = Services(context.deployment).store()
    run = recipe_context(context, "hand_ranked", K)
    config = run.recall_config()
    pools = []
    for question in data.questions:
        state = RecallState.model_validate(recall_state(question.text, question.namespace, run))
        ranked = rank_pool(store, question.namespace, state.alignment_query, state.pool, config)
        cues = state.cues or QueryCues()
        matrix = candidates(store, question.namespace, state.query, cues, state.plan, ranked)
        gold = set(question.gold)
        labels = np.array([float(bool(gold & set(e.memory.provenance.turn_ids))) for e in ranked])
        asked = (question.namespace, question.text, question.category, question.gold)
        pools.append(Pool(*asked, ranked, matrix, labels, learned_for(cues)))
        advance()
    return pools


def train(pools: Sequence[Pool], about: Mapping[str, Any] | None = None) -> Ranker:
    """LambdaRank on the pools that hold both a gold memory and another; deterministic."""
    import lightgbm

    used = [p for p in pools if 0 < p.labels.sum() < len(p.labels)]
    if not used:
        raise ValueError("no pool holds both a gold memory and another: nothing to learn from")
    rows = np.vstack([p.matrix for p in used])
    labels = np.concatenate([p.labels for p in used])
    groups = [len(p.labels) for p in used]
    dataset = lightgbm.Dataset(
        rows, labels, group=groups, feature_name=list(FEATURES), params=PARAMETERS
    )
    booster = lightgbm.train(PARAMETERS, dataset, num_boost_round=ROUNDS)
    trees = booster.dump_model()["tree_info"]
    details = {
        "conversations": sorted({p.namespace for p in used}),
        "questions": len(used),
        "candidates": len(labels),
        "parameters": PARAMETERS,
        "rounds": ROUNDS,
        "lightgbm": lightgbm.__version__,
    }
    return from_stumps(FEATURES, trees, rows, dict(about or {}) | details)


def ordered_turns(pool: Pool, ranker: Ranker) -> list[str]:
    """The turns of the top K as the graph keeps them with ``ranker`` (no token limit)."""
    order = learned_order(pool.items, pool.matrix, ranker).items if pool.learned else pool.items
    kept = select(order, K, 100_000)
    return list(dict.fromkeys(t for e in kept for t in e.memory.provenance.turn_ids))


def folds(pools: Sequence[Pool]) -> dict[str, Ranker]:
    """For each conversation, the ranker trained on every other one (leave one group out)."""
    from sklearn.model_selection import LeaveOneGroupOut

    groups = [p.namespace for p in pools]
    trained = {}
    for rest, held in LeaveOneGroupOut().split(pools, groups=groups):
        name = groups[held[0]]
        trained[name] = train([pools[i] for i in rest], {"name": f"trained without {name}"})
    return trained


def _details(pools: Sequence[Pool], turns: Sequence[list[str]]) -> list[dict[str, Any]]:
    return [
        {"namespace": p.namespace, "question": p.question, "category": p.category,
         "gold": p.gold, "retrieved": t[:K]}
        for p, t in zip(pools, turns, strict=True)
    ]  # fmt: skip


def graph_details(
    data: LocomoData,
    context: Deployed,
    trained: Mapping[str, Ranker],
    advance: Callable[[], None],
    variant: Variant = SHIPPED_SETTINGS,
) -> list[dict[str, Any]]:
    """The real recall graph on each conversation with its fold's ranker, in question order."""
    by_namespace: dict[str, list[dict[str, Any]]] = {}
    for namespace, ranker in trained.items():
        held = replace(data, questions=[q for q in data.questions if q.namespace == namespace])
        run = under(context, replace(variant.settings, ranker=ranker), variant)
        by_namespace[namespace] = run_locomo(held, run, ("ripplegraph",), advance)["details"][
            "ripplegraph"
        ]
    return [by_namespace[q.namespace].pop(0) for q in data.questions]


def scores(details: Sequence[Mapping[str, Any]], keep: set[str]) -> dict[str, Any]:
    """Per category of the conversations ``keep``: R@10 and All@30 means, and hits by question."""
    out: dict[str, Any] = {}
    for category in sorted({d["category"] for d in details}):
        rows = [d for d in details if d["category"] == category and d["namespace"] in keep]
        if rows:
            out[category] = {
                "R@10": mean([recall_at(d["retrieved"], d["gold"], 10) for d in rows]),
                f"All@{K}": mean([all_at(d["retrieved"], d["gold"], K) for d in rows]),
                "questions": len(rows),
            }
    return out


def multi_hop(details: Sequence[Mapping[str, Any]]) -> tuple[dict[str, int], dict[str, int]]:
    """Per conversation, multi-hop questions with all gold in the top K, and their number."""
    found: dict[str, int] = {}
    counts: dict[str, int] = {}
    for d in details:
        if d["category"] == "multi-hop":
            counts[d["namespace"]] = counts.get(d["namespace"], 0) + 1
            hit = int(all_at(d["retrieved"], d["gold"], K) == 1.0)
            found[d["namespace"]] = found.get(d["namespace"], 0) + hit
    return found, counts


def hits(details: Sequence[Mapping[str, Any]]) -> dict[tuple[str, int], bool]:
    """Whether each multi-hop question had all its gold in the top K, by (conversation, index)."""
    return {
        (d["namespace"], i): all_at(d["retrieved"], d["gold"], K) == 1.0
        for i, d in enumerate(details)
        if d["category"] == "multi-hop"
    }


def run_ranker(
    data: LocomoData,
    context: Deployed,
    advance: Callable[[], None] = lambda: None,
    variant: Variant = SHIPPED_SETTINGS,
) -> tuple[dict[str, Any], Ranker]:
    """Capture, leave-one-conversation-out, the graph rerun per fold, and the shipped model.

    Everything but the first hop runs under ``variant`` (``folds.variants``; by default the
    shipped settings).  Returns the results and the ranker trained on every conversation.
    """
    hand = under(context, replace(variant.settings, learned=False), variant)
    first_hop = run_locomo(data, context, ("first_hop",), advance)["details"]["first_hop"]
    hand_ranked = run_locomo(data, hand, ("hand_ranked",), advance)["details"]["hand_ranked"]
    pools = capture(data, hand, advance)
    trained = folds(pools)
    simulated = _details(pools, [ordered_turns(p, trained[p.namespace]) for p in pools])
    learned = graph_details(data, context, trained, advance, variant)
    everything = train(pools, {"name": f"trained on {len(trained)} development conversations"})
    in_sample = _details(pools, [ordered_turns(p, everything) for p in pools])
    systems = {
        "first_hop": first_hop,
        "hand_ranked": hand_ranked,
        "learned (left out)": learned,
        "learned (in sample)": in_sample,
    }
    same = sum(a["retrieved"] == b["retrieved"] for a, b in zip(simulated, learned, strict=True))
    kinds: dict[str, set[str]] = {}
    for namespace, kind in data.sets.items():
        kinds.setdefault(kind, set()).add(namespace)
    results = {
        "metric": f"multi-hop All@{K}",
        "settings": variant.name,
        "data": data.counts,
        "sets": data.sets,
        "features": list(FEATURES),
        "parameters": PARAMETERS | {"rounds": ROUNDS},
        "simulation_matches_graph": {"questions": same, "of": len(learned)},
        "kinds": {kind: summary(systems, group) for kind, group in sorted(kinds.items())},
        "conversations": conversations(systems),
        "shipped": {"importance": importance(everything)},
        "details": {name: list(rows) for name, rows in systems.items()},
    }
    return results, everything


def summary(systems: Mapping[str, Sequence[Mapping[str, Any]]], group: set[str]) -> dict[str, Any]:
    """One kind of conversation: every system's scores, and the left-out ranker against the rest."""
    first_found, counts = multi_hop(systems["first_hop"])
    keep = sorted(c for c in counts if c in group)
    out: dict[str, Any] = {"conversations": len(keep), "systems": {}}
    for name, details in systems.items():
        found, _ = multi_hop(details)
        row = _estimate(found, first_found, counts, keep) | scores(details, group)
        if name != "first_hop":
            chosen = {k: v for k, v in hits(details).items() if k[0] in group}
            row |= paired(
                chosen, {k: v for k, v in hits(systems["first_hop"]).items() if k[0] in group}
            )
        out["systems"][name] = row
    return out


def conversations(
    systems: Mapping[str, Sequence[Mapping[str, Any]]],
) -> dict[str, dict[str, float]]:
    """Multi-hop All@K per conversation, per system."""
    table: dict[str, dict[str, float]] = {}
    for name, details in systems.items():
        found, counts = multi_hop(details)
        for conversation in sorted(counts):
            table.setdefault(conversation, {})[name] = (
                found.get(conversation, 0) / counts[conversation]
            )
    return table


def importance(ranker: Ranker) -> dict[str, float]:
    """How far each feature moves the score over the candidates trained on (its shape's range)."""
    ranges = {
        f: float(s.values.max() - s.values.min()) if len(s.values) else 0.0
        for f, s in zip(ranker.features, ranker.shapes, strict=True)
    }
    return dict(sorted(ranges.items(), key=lambda fr: -fr[1]))
