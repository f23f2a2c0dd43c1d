"""The learned ranker, trained on the development conversations and scored out of sample.

Recall's pool does not depend on the ranker (it orders the pool only as evidence is
assembled), so each question's final pool is captured once, as assembly sees it, with every
candidate's features (``policies.ranking.FEATURES``) and whether it holds a gold turn.
LambdaRank (LightGBM, one-split trees: an additive model, ``agent.learned``) then trains on
those pools.  Leave one conversation out (scikit-learn's ``LeaveOneGroupOut``, the groups
being conversations): each conversation is ranked by the model trained on all the others, and
the real recall graph is run again on it with that model, so the out-of-sample numbers are
the graph's own, and the captured simulation is checked against them question by question.
Leaving a kind out instead (the groups being kinds) judges each kind with models that never
saw one of its conversations.  The shipped model trains on every conversation.

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
from ripplegraph.agent.decisions.policies.expansion import (
    WALK_FEATURES,
    walk,
    walk_table,
    walk_target,
    walked_types,
)
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
from ripplegraph.agent.eval.names import Leave
from ripplegraph.agent.eval.systems import recipe_context
from ripplegraph.agent.graph import recall_graph
from ripplegraph.agent.learned import Ranker, from_stumps
from ripplegraph.agent.recall_config import FULL, RecallConfig
from ripplegraph.agent.services import Services
from ripplegraph.agent.state import QueryCues, RecallInput, RecallState
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


@dataclass
class Walked:
    """One round's walk of one question: its candidates' features and which hold gold turns."""

    namespace: str
    matrix: np.ndarray
    labels: np.ndarray


def capture_walks(
    data: LocomoData, context: Deployed, advance: Callable[[], None] = lambda: None
) -> list[Walked]:
    """Every round's walk of every question as the graph under ``context`` walks it.

    The graph is streamed; the state each ``expand_locally`` step starts from is walked again
    here, as that node walks it, and every candidate labelled by the question's gold turns.
    """
    store = Services(context.deployment).store()
    run = recipe_context(context, "hand_ranked", K)
    config = run.recall_config()
    types = walked_types(config)
    walks = []
    for question in data.questions:
        gold = set(question.gold)
        planned = False
        asked = RecallInput(query=question.text, namespace=question.namespace)
        for mode, chunk in recall_graph.stream(
            asked, context=run, stream_mode=["updates", "values"]
        ):
            if mode == "updates":
                planned = "plan_recollection" in chunk
                continue
            if not planned:
                continue
            state = RecallState.model_validate(chunk)
            assert state.plan is not None
            namespace, plan = question.namespace, state.plan
            target = walk_target(store, plan)
            found = walk(
                store, namespace, plan.anchors, state.pool.keys(), hops=run.recall.hops,
                edge_types=types,
            )  # fmt: skip
            matrix = walk_table(
                store, namespace, found, plan, target, store.embedder.query(question.text),
                state.rounds + 1,
            )  # fmt: skip
            labels = [
                float(bool(gold & set(m.provenance.turn_ids))) for m in found.memories.values()
            ]
            walks.append(Walked(namespace, matrix, np.array(labels)))
        advance()
    return walks


def fit(
    groups: Sequence[tuple[np.ndarray, np.ndarray]],
    features: Sequence[str],
    about: Mapping[str, Any],
    group: str,
) -> Ranker:
    """LambdaRank on the groups (rows, labels) that hold both a positive row and another.

    ``about`` goes into the file with the data's size, the number of groups named ``group``.

    Deterministic: the same groups give the same model, byte for byte.
    """
    import lightgbm

    used = [(m, y) for m, y in groups if 0 < y.sum() < len(y)]
    if not used:
        raise ValueError("no group holds both a gold memory and another: nothing to learn from")
    rows = np.vstack([m for m, _ in used])
    labels = np.concatenate([y for _, y in used])
    dataset = lightgbm.Dataset(
        rows, labels, group=[len(y) for _, y in used], feature_name=list(features),
        params=PARAMETERS,
    )  # fmt: skip
    booster = lightgbm.train(PARAMETERS, dataset, num_boost_round=ROUNDS)
    trees = booster.dump_model()["tree_info"]
    details = {
        group: len(used),
        "candidates": len(labels),
        "parameters": PARAMETERS,
        "rounds": ROUNDS,
        "lightgbm": lightgbm.__version__,
    }
    return from_stumps(features, trees, rows, dict(about) | details)


def train(pools: Sequence[Pool], about: Mapping[str, Any] | None = None) -> Ranker:
    """The ranker: LambdaRank on the pools, one group a question."""
    used = sorted({p.namespace for p in pools if 0 < p.labels.sum() < len(p.labels)})
    return fit(
        [(p.matrix, p.labels) for p in pools],
        FEATURES,
        dict(about or {}) | {"conversations": used},
        "questions",
    )


def train_walker(walks: Sequence[Walked], about: Mapping[str, Any] | None = None) -> Ranker | None:
    """The walk model: LambdaRank on the walks, one group a round of a question.

    ``None`` where no walk reached both a gold memory and another: nothing to learn, so that
    recall walks by hand.
    """
    used = sorted({w.namespace for w in walks if 0 < w.labels.sum() < len(w.labels)})
    if not used:
        return None
    return fit(
        [(w.matrix, w.labels) for w in walks],
        WALK_FEATURES,
        dict(about or {}) | {"conversations": used},
        "walks",
    )


def ordered_turns(pool: Pool, ranker: Ranker) -> list[str]:
    """The turns of the top K as the graph keeps them with ``ranker`` (no token limit)."""
    order = learned_order(pool.items, pool.matrix, ranker).items if pool.learned else pool.items
    kept = select(order, K, 100_000)
    return list(dict.fromkeys(t for e in kept for t in e.memory.provenance.turn_ids))


def fold_of(data: LocomoData, leave: Leave) -> dict[str, str]:
    """Each conversation's fold: itself, or its kind (so no model sees a sample of that kind)."""
    asked = sorted({q.namespace for q in data.questions})
    return {ns: ns if leave is Leave.CONVERSATION else data.sets[ns] for ns in asked}


def walk_folds(walks: Sequence[Walked], fold: Mapping[str, str]) -> dict[str, Ranker | None]:
    """For each fold, the walk model trained on every other fold's walks."""
    return {
        name: train_walker(
            [w for w in walks if fold[w.namespace] != name], {"name": f"trained without {name}"}
        )
        for name in sorted(set(fold.values()))
    }


def folds(pools: Sequence[Pool], fold: Mapping[str, str]) -> dict[str, Ranker]:
    """For each fold, the ranker trained on every other one (leave one group out)."""
    from sklearn.model_selection import LeaveOneGroupOut

    groups = [fold[p.namespace] for p in pools]
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
    settings: Mapping[str, RecallConfig],
    advance: Callable[[], None],
    variant: Variant = SHIPPED_SETTINGS,
) -> list[dict[str, Any]]:
    """The real recall graph on each conversation with its fold's settings, in question order."""
    by_namespace: dict[str, list[dict[str, Any]]] = {}
    for namespace, chosen in settings.items():
        held = replace(data, questions=[q for q in data.questions if q.namespace == namespace])
        run = under(context, chosen, variant)
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


def walking(settings: RecallConfig, walker: Ranker | None, **changes: Any) -> RecallConfig:
    """``settings`` walking with ``walker``, or by hand where there is none."""
    return replace(settings, walker=walker, learned_walk=walker is not None, **changes)


@dataclass
class Trained:
    """What ``run_ranker`` trains on every conversation: the ranker and, if learned, the walk."""

    ranker: Ranker
    walker: Ranker | None


def run_ranker(
    data: LocomoData,
    context: Deployed,
    advance: Callable[[], None] = lambda: None,
    variant: Variant = SHIPPED_SETTINGS,
    leave: Leave = Leave.CONVERSATION,
) -> tuple[dict[str, Any], Trained]:
    """Capture, leave one fold out, the graph rerun per fold, and the shipped models.

    A fold is one conversation, or with ``Leave.KIND`` every conversation of one kind: then
    each kind is judged by models that never saw a conversation of its kind, the estimate for
    a kind there is no sample of.  Everything but the first hop runs under ``variant``
    (``folds.variants``; by default the shipped settings).  Where the variant learns the walk
    (``learned_walk``), each fold's walk model is trained on the other folds' walks, the pools
    its ranker learns from are gathered with that walk model, and the hand-ranked row walks by
    hand too.
    """
    settings = variant.settings
    fold = fold_of(data, leave)
    hand = under(context, replace(settings, learned=False, learned_walk=False), variant)
    first_hop = run_locomo(data, context, ("first_hop",), advance)["details"]["first_hop"]
    hand_ranked = run_locomo(data, hand, ("hand_ranked",), advance)["details"]["hand_ranked"]
    walker = None
    rankers: dict[str, Ranker] = {}
    walkers: dict[str, Ranker | None] = {}
    held_pools: dict[str, list[Pool]] = {}
    if settings.learned_walk:
        walks = capture_walks(data, hand, advance)
        everyone = {"name": f"trained on {len(data.sets)} development conversations"}
        walker = train_walker(walks, everyone)
        walkers = walk_folds(walks, fold)
        for held, fold_walker in walkers.items():
            gathering = walking(settings, fold_walker, learned=False)
            pools = capture(data, under(context, gathering, variant), advance)
            for p in pools:
                if fold[p.namespace] == held:
                    held_pools.setdefault(p.namespace, []).append(p)
            others = [p for p in pools if fold[p.namespace] != held]
            rankers[held] = train(others, {"name": f"trained without {held}"})
        gathering = walking(settings, walker, learned=False)
        pools = capture(data, under(context, gathering, variant), advance)
    else:
        pools = capture(data, hand, advance)
        rankers = folds(pools, fold)
        for p in pools:
            held_pools.setdefault(p.namespace, []).append(p)
    asked = [held_pools[q.namespace].pop(0) for q in data.questions]
    simulated = _details(asked, [ordered_turns(p, rankers[fold[p.namespace]]) for p in asked])
    fold_settings = {
        namespace: walking(settings, walkers.get(held), ranker=rankers[held])
        if settings.learned_walk
        else replace(settings, ranker=rankers[held])
        for namespace, held in fold.items()
    }
    learned = graph_details(data, context, fold_settings, advance, variant)
    everything = train(pools, {"name": f"trained on {len(fold)} development conversations"})
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
    shipped = {"importance": importance(everything)}
    if walker is not None:
        shipped["walk_importance"] = importance(walker)
    results: dict[str, Any] = {
        "metric": f"multi-hop All@{K}",
        "settings": variant.name,
        "leave_out": leave.value,
        "data": data.counts,
        "sets": data.sets,
        "features": list(FEATURES),
        "parameters": PARAMETERS | {"rounds": ROUNDS},
        "simulation_matches_graph": {"questions": same, "of": len(learned)},
        "kinds": {kind: summary(systems, group) for kind, group in sorted(kinds.items())},
        "conversations": conversations(systems),
        "shipped": shipped,
        "details": {name: list(rows) for name, rows in systems.items()},
    }
    if settings.learned_walk:
        learned_walks = sum(w is not None for w in walkers.values())
        results["walk"] = {
            "features": list(WALK_FEATURES),
            "folds_learned": learned_walks,
            "folds": len(walkers),
            "shipped_learned": walker is not None,
        }
    return results, Trained(everything, walker)


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
