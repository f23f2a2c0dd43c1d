"""LoCoMo-style evidence recall: does the retrieved set hold the turns the answer needs.

One memory unit per turn (offline extraction), one namespace per conversation (LoCoMo's or
REALTALK's, read by ``agent.eval.conversations``).  Retrieved units map to turn ids through
their provenance (ordered, deduplicated), so LLM-extracted units that span several turns are
measured the same way.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ripplegraph.agent.context import Deployed
from ripplegraph.agent.decisions.policies.expansion import walked_types
from ripplegraph.agent.eval.conversations import LocomoData, Question
from ripplegraph.agent.eval.metrics import KS, all_at, mean, percentiles, recall_at
from ripplegraph.agent.eval.names import GRAPH_SYSTEMS
from ripplegraph.agent.eval.systems import Retrieved, make_systems, recipe_context, retrieve
from ripplegraph.agent.memory import MemoryUnit
from ripplegraph.agent.models.llm import RoleCaller, estimate_tokens
from ripplegraph.agent.services import Services
from ripplegraph.agent.spend import Spend
from ripplegraph.agent.state import Evidence, Plan
from ripplegraph.agent.store import DIALOGUE, LINK_TYPES, MemoryStore
from ripplegraph.agent.surfaces.api import recall_state
from ripplegraph.prompts import answer as answer_prompt
from ripplegraph.prompts import judge
from ripplegraph.prompts.evidence import render_memories


@dataclass
class _Tally:
    """One system's scores, latencies and context sizes as the questions come in."""

    per_category: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    per_conversation: dict[str, dict[str, dict[str, list[float]]]] = field(default_factory=dict)
    per_set: dict[str, dict[str, dict[str, list[float]]]] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    tokens: dict[int, list[float]] = field(default_factory=lambda: {k: [] for k in KS})
    details: list[dict[str, Any]] = field(default_factory=list)

    def add(
        self, question: Question, found: Retrieved, graded: dict[str, float], kind: str
    ) -> None:
        """Score one retrieval against the question's gold turns."""
        self.latencies.append(found.milliseconds)
        ordered, turns = found.units, found.turns
        for k in KS:
            self.tokens[k].append(sum(estimate_tokens(u.text) for u in ordered[:k]))
        conversation = self.per_conversation.setdefault(question.namespace, {})
        of_kind = self.per_set.setdefault(kind, {})
        for bucket in (question.category, "overall"):
            for scores in (
                self.per_category.setdefault(bucket, {}),
                conversation.setdefault(bucket, {}),
                of_kind.setdefault(bucket, {}),
            ):
                for k in KS:
                    scores.setdefault(f"R@{k}", []).append(recall_at(turns, question.gold, k))
                    scores.setdefault(f"All@{k}", []).append(all_at(turns, question.gold, k))
                for metric, value in graded.items():
                    scores.setdefault(metric, []).append(value)
        self.details.append(
            {
                "namespace": question.namespace,
                "question": question.text,
                "category": question.category,
                "gold": question.gold,
                "retrieved": turns[: max(KS)],
            }
        )

    def summary(self) -> dict[str, Any]:
        """Means per category, latency percentiles, context sizes, per conversation and kind."""
        return {
            bucket: {metric: mean(values) for metric, values in scores.items()}
            for bucket, scores in self.per_category.items()
        } | {
            "latency_ms": percentiles(self.latencies),
            "context_tokens": {f"@{k}": mean(v) for k, v in self.tokens.items()},
            "conversations": _means(self.per_conversation),
            "sets": _means(self.per_set),
        }


def run_locomo(
    data: LocomoData,
    context: Deployed,
    systems: tuple[str, ...],
    advance: Callable[[], None] = lambda: None,
    answerer: RoleCaller | None = None,
) -> dict[str, Any]:
    """Score each system per category and overall, with latency and context size.

    Every score is also kept per conversation (``conversations``): a method change counts when
    it helps on most conversations, not only on their total; and per kind of conversation
    (``sets``: LoCoMo's, REALTALK's), which a change must serve both of.  Each question goes
    to every system in turn, each system first as often as the others, so the machine's drift
    and a question's first, colder run fall on all of them alike and latencies compare.

    With ``answerer``, each system's top-30 evidence also goes to the answer role, and the
    judge role grades the answer against the reference (``Judge``), beside token ``F1``.
    """
    store = Services(context.deployment).store()
    results: dict[str, Any] = {
        "systems": {},
        "data": data.counts,
        "sets": data.sets,
        "details": {},
    }
    depth = max(KS)
    chosen = make_systems(store, context, systems)
    tallies = {system.name: _Tally() for system in chosen}
    for index, question in enumerate(data.questions):
        turn = index % len(chosen)
        for system in chosen[turn:] + chosen[:turn]:
            found = retrieve(store, system, question.namespace, question.text, depth)
            graded = grade(answerer, question, found.units[:ANSWER_K]) if answerer else {}
            tallies[system.name].add(question, found, graded, data.sets.get(question.namespace, ""))
            advance()
    for system in chosen:
        results["systems"][system.name] = tallies[system.name].summary()
        results["details"][system.name] = tallies[system.name].details
    return results


def _means(
    groups: dict[str, dict[str, dict[str, list[float]]]],
) -> dict[str, dict[str, dict[str, float]]]:
    """Each group's mean of every metric, per bucket (category or overall)."""
    return {
        group: {
            bucket: {metric: mean(values) for metric, values in scores.items()}
            for bucket, scores in buckets.items()
        }
        for group, buckets in groups.items()
    }


ANSWER_K = 30  # evidence handed to the answer model (RippleMem's K)
_WORD = re.compile(r"[a-z0-9]+")


def token_f1(answer: str, reference: str) -> float:
    """SQuAD-style token F1 between an answer and the reference."""
    got, want = _WORD.findall(answer.lower()), _WORD.findall(reference.lower())
    common = sum(min(got.count(w), want.count(w)) for w in set(got))
    if not got or not want or not common:
        return 0.0
    precision, recall = common / len(got), common / len(want)
    return 2 * precision * recall / (precision + recall)


def grade(answerer: RoleCaller, question: Question, evidence: list[MemoryUnit]) -> dict[str, float]:
    """Answer from the evidence, then judge it; a failed call counts as a wrong answer."""
    allowance = Spend(calls=4, tokens=60_000)
    memories = render_memories(evidence)
    reply = answerer(answer_prompt.ROLE, answer_prompt.render(question.text, memories), allowance)
    text = reply.value.answer if reply.value else ""
    verdict = answerer(judge.ROLE, judge.render(question.text, question.answer, text), allowance)
    correct = bool(text and verdict.value and verdict.value.correct)
    return {"Judge": float(correct), "F1": token_f1(text, question.answer)}


def miss_analysis(
    data: LocomoData, context: Deployed, results: dict[str, Any], system: str = "ripplegraph"
) -> dict[str, Any]:
    """Every multi-hop gold turn ``system`` missed in its top 30: how far, and what passed it.

    The recall is run again for each question with a miss (it is deterministic), keeping its
    whole final state.  For each missed turn: its distance over the typed edges from the
    kept evidence and the edge types of that shortest path (``typed_distance``); the step
    that passed it over (``passed_over``); and which other systems found it.
    """
    details = results["details"]
    if system not in details:
        return {}
    store = Services(context.deployment).store()
    unit_of: dict[tuple[str, str], str] = {}
    for namespace in data.sessions:
        for unit in store.all_units(namespace):
            for turn in unit.provenance.turn_ids:
                unit_of[(namespace, turn)] = unit.id
    run_context = recipe_context(context, GRAPH_SYSTEMS[system], MISS_DEPTH)
    misses: list[dict[str, Any]] = []
    gold_total = 0
    for index, record in enumerate(details[system]):
        if record["category"] != "multi-hop":
            continue
        namespace = record["namespace"]
        gold_total += len(record["gold"])
        kept = set(record["retrieved"][:MISS_DEPTH])
        lost = [t for t in record["gold"] if t not in kept and (namespace, t) in unit_of]
        if not lost:
            continue
        state = recall_state(record["question"], namespace, run_context)
        reached = {unit_of[(namespace, t)] for t in kept if (namespace, t) in unit_of}
        for turn in lost:
            target = unit_of[(namespace, turn)]
            distance, path = typed_distance(store, namespace, reached, target)
            misses.append(
                {
                    "question": index,
                    "namespace": namespace,
                    "turn": turn,
                    "distance": distance,
                    "path": path,
                    "passed_over": passed_over(store, namespace, state, target, run_context),
                    "found_by": [
                        other
                        for other, rows in details.items()
                        if other != system and turn in rows[index]["retrieved"][:MISS_DEPTH]
                    ],
                }
            )
    by_distance = Counter(
        "more than 3 hops" if m["distance"] is None else f"{m['distance']} hop(s)" for m in misses
    )
    return {
        "system": system,
        "multi_hop_gold_turns": gold_total,
        "missed_at_30": len(misses),
        "missed_by_distance_from_retrieved": dict(sorted(by_distance.items())),
        "missed_by_path": dict(
            Counter("→".join(m["path"]) for m in misses if m["path"]).most_common()
        ),
        "passed_over_by": dict(Counter(m["passed_over"] for m in misses).most_common()),
        "missed_but_found_by": dict(
            Counter(other for m in misses for other in m["found_by"]).most_common()
        ),
        "misses": misses,
    }


MISS_DEPTH = 30  # the evidence the miss report counts as kept (RippleMem's K)
_FAR = 3  # hops the miss report walks before it calls a turn out of reach


def typed_distance(
    store: MemoryStore, namespace: str, start: set[str], target: str
) -> tuple[int | None, list[str]]:
    """Hops from ``start`` to ``target`` over the linking edges, and the edge types walked."""
    paths: dict[str, list[str]] = {mid: [] for mid in start}
    frontier = set(start)
    for _ in range(_FAR):
        if target in paths:
            break
        next_frontier: set[str] = set()
        for edge in store.neighbours(namespace, frontier, (*LINK_TYPES, DIALOGUE)):
            if edge.dst not in paths:
                paths[edge.dst] = [*paths[edge.src], edge.type]
                next_frontier.add(edge.dst)
        frontier = next_frontier
    if target not in paths:
        return None, []
    return len(paths[target]), paths[target]


def passed_over(
    store: MemoryStore, namespace: str, state: dict[str, Any], target: str, context: Deployed
) -> str:
    """The step of the recall that let ``target`` go (its final state says which)."""
    pooled = state.get("pool", {})
    if target in pooled:
        channels = {source.channel for source in Evidence.model_validate(pooled[target]).sources}
        found = "expansion" if "expansion" in channels else "first hop"
        if channels - {"semantic", "lexical", "cue", "expansion"}:
            found = "roots or refinement"
        return f"pooled by the {found}, cut by assembly"
    plan = state.get("plan")
    if not plan or not state.get("rounds"):
        return "never pooled: no expansion ran"
    anchors = set(Plan.model_validate(plan).anchors)
    config = context.recall_config()
    walked = walked_types(config)
    frontier, seen = set(anchors), set(anchors)
    for _ in range(context.recall.hops):
        frontier = {e.dst for e in store.neighbours(namespace, frontier, walked)} - seen
        seen |= frontier
    if target in seen:
        return "walked by expansion, not kept (top n per channel)"
    return "never pooled: beyond the walk from the anchors"
