"""Leave one conversation out: whether what wins on some conversations wins on the next.

A recall setting or mechanism chosen on a few conversations can fit those few.  This bench
runs the full graph under variants (a setting changed, a mechanism switched off or an
alternative switched on, or several joined into one) beside the first hop, scores every
variant per conversation, and reports two readings:

- **The rule**: a variant counts against the full graph only when it helps on at least
  four of every five conversations and on their total.
- **Folds**: for each conversation, the variant the other conversations choose, scored on
  the one left out.  Their total estimates what choosing settings on this data is worth on a
  conversation it has not seen, next to the first hop on the same questions, with the paired
  count of questions only one of them found (wins and losses), overall and for each kind of
  conversation (LoCoMo's, REALTALK's) when the run holds both: a choice must serve each.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, get_type_hints

from ripplegraph.agent.context import Deployed, RecallLimits
from ripplegraph.agent.eval.conversations import LocomoData
from ripplegraph.agent.eval.locomo import run_locomo
from ripplegraph.agent.eval.metrics import all_at
from ripplegraph.agent.recall_config import FULL, RecallConfig

CATEGORY, K = "multi-hop", 30
"""What the folds choose by: every gold turn of a multi-hop question in the top K."""
METRIC = f"{CATEGORY} All@{K}"

GUARDS = (("single-hop", "R@10"), ("temporal", "R@10"))
"""Reported beside the metric for each variant: what a change must not cost."""

BASELINE, INCUMBENT = "first_hop", "full"
INCUMBENT_SYSTEM = "ripplegraph"
"""The bench system that runs the full graph (under the variant's settings, for a variant)."""


RULE_SHARE = 0.8
"""A variant counts when it helps on this share of the conversations (four of five)."""

_LIMITS = ("hops", "rounds", "refinements")
_KINDS = (int, float, bool)


@dataclass(frozen=True)
class Variant:
    """The full graph with one setting changed: a recipe field or a recall limit."""

    name: str
    settings: RecallConfig
    limits: dict[str, int]


def variants(specs: Sequence[str]) -> list[Variant]:
    """One variant per value of each ``field=v1,v2`` spec, or one per ``f1=v+f2=w`` spec.

    ``field`` is a number or switch of the recipe (``RecallConfig``) or one of the recall
    limits ``hops``, ``rounds``, ``refinements`` (brought into their ranges, so ``hops=9`` is
    ``hops=3``); ``+`` joins one value of several fields into one variant (a mechanism
    swapped together with its budget).  An unknown field or a value of the wrong type or
    below 0 raises ``ValueError`` naming it.
    """
    found: dict[str, Variant] = {}
    for spec in specs:
        parts = [part.strip() for part in spec.split("+")]
        if len(parts) > 1:
            chosen = [_setting(*_field_values(part)) for part in parts]
            settings = replace(FULL, **{k: v for _, recipe, _ in chosen for k, v in recipe.items()})
            limits = {k: v for _, _, limit in chosen for k, v in limit.items()}
            joint = Variant("+".join(name for name, _, _ in chosen), settings, limits)
            found.setdefault(joint.name, joint)
            continue
        name, values = _field_values(spec, single=False)
        for raw in values.split(","):
            label, recipe, limits = _setting(name, raw.strip())
            found.setdefault(label, Variant(label, replace(FULL, **recipe), limits))
    return list(found.values())


_RECIPE_FIELDS = {
    f.name: kind
    for f in fields(RecallConfig)
    if (kind := get_type_hints(RecallConfig)[f.name]) in _KINDS
}


def _field_values(spec: str, single: bool = True) -> tuple[str, str]:
    name, _, values = spec.partition("=")
    name = name.strip()
    if name not in _RECIPE_FIELDS and name not in _LIMITS:
        known = ", ".join([*sorted(_RECIPE_FIELDS), *_LIMITS])
        raise ValueError(f"cannot vary {name!r}: choose from {known}")
    if single and "," in values:
        raise ValueError(f"{spec!r}: one value for each field joined by '+'")
    return name, values.strip()


def _setting(name: str, raw: str) -> tuple[str, dict[str, Any], dict[str, int]]:
    """A field's value as (label, recipe changes, limit changes)."""
    value = _parsed(name, raw, _RECIPE_FIELDS.get(name, int))
    if name in _LIMITS:
        limits = RecallLimits.model_validate({name: value}).model_dump(include={name})
        return f"{name}={limits[name]}", {}, limits
    return f"{name}={raw}", {name: value}, {}


def _parsed(name: str, raw: str, kind: type) -> Any:
    if kind is bool:
        if raw.lower() in ("true", "false"):
            return raw.lower() == "true"
        raise ValueError(f"{name}={raw!r}: not true or false")
    try:
        value = kind(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r}: not {'an int' if kind is int else 'a number'}") from None
    if value < 0:
        raise ValueError(f"{name}={raw!r}: below 0")
    return value


def total(found: Mapping[str, int], counts: Mapping[str, int], keep: Sequence[str]) -> float:
    """The share of the questions of the conversations ``keep`` that were found."""
    questions = sum(counts[c] for c in keep)
    return sum(found[c] for c in keep) / questions if questions else 0.0


def against(
    candidate: Mapping[str, int], incumbent: Mapping[str, int], counts: Mapping[str, int]
) -> dict[str, Any]:
    """On how many conversations ``candidate`` finds more, and whether that passes the rule."""
    conversations = sorted(counts)
    helps = sum(candidate[c] > incumbent[c] for c in conversations)
    hurts = sum(candidate[c] < incumbent[c] for c in conversations)
    gain = sum(candidate[c] - incumbent[c] for c in conversations)
    needed = math.ceil(RULE_SHARE * len(conversations))
    return {
        "helps": helps,
        "hurts": hurts,
        "gain": gain / sum(counts.values()),
        "counts": helps >= needed and gain > 0,
    }


def leave_one_out(
    found: Mapping[str, Mapping[str, int]],
    counts: Mapping[str, int],
    incumbent: str = INCUMBENT,
) -> list[dict[str, Any]]:
    """For each conversation, the variant that finds most on the others, and its share there.

    ``found[variant][conversation]`` counts the questions found.  Ties go to ``incumbent``,
    then to the first name: a change must beat what is there.
    """
    folds = []
    for held in sorted(counts):
        rest = [c for c in sorted(counts) if c != held]
        chosen = max(
            sorted(found), key=lambda name: (sum(found[name][c] for c in rest), name == incumbent)
        )
        share = found[chosen][held] / counts[held]
        folds.append({"held_out": held, "chosen": chosen, "score": share})
    return folds


def _found(details: Sequence[Mapping[str, Any]]) -> tuple[dict[str, int], dict[str, int]]:
    """Per conversation, the questions of the metric's category found, and their number."""
    found: dict[str, int] = {}
    counts: dict[str, int] = {}
    for question in details:
        if question["category"] == CATEGORY:
            namespace = question["namespace"]
            hit = all_at(question["retrieved"], question["gold"], K)
            found[namespace] = found.get(namespace, 0) + int(hit)
            counts[namespace] = counts.get(namespace, 0) + 1
    return found, counts


def run_folds(
    data: LocomoData,
    context: Deployed,
    chosen: Sequence[Variant],
    advance: Callable[[], None] = lambda: None,
) -> dict[str, Any]:
    """Score the first hop, the full graph and each variant per conversation; then the folds."""
    first = run_locomo(data, context, (BASELINE, INCUMBENT_SYSTEM), advance)
    runs = {BASELINE: first, INCUMBENT: first}
    names = {BASELINE: BASELINE, INCUMBENT: INCUMBENT_SYSTEM}
    for variant in chosen:
        tuned = context.model_copy(
            update={
                "recall_settings": variant.settings,
                "recall": context.recall.model_copy(update=variant.limits),
            }
        )
        runs[variant.name] = run_locomo(data, tuned, (INCUMBENT_SYSTEM,), advance)
        names[variant.name] = INCUMBENT_SYSTEM
    counts = _found(first["details"][INCUMBENT_SYSTEM])[1]
    found = {name: _found(run["details"][names[name]])[0] for name, run in runs.items()}
    hits = {name: _hits(run["details"][names[name]]) for name, run in runs.items()}
    systems = {name: run["systems"][names[name]] for name, run in runs.items()}
    graph = {name: f for name, f in found.items() if name != BASELINE}
    folds = leave_one_out(graph, counts)
    held = {fold["held_out"]: found[fold["chosen"]][fold["held_out"]] for fold in folds}
    chosen_hits = {
        key: hit
        for fold in folds
        for key, hit in hits[fold["chosen"]].items()
        if key[0] == fold["held_out"]
    }
    kinds = {c: data.sets.get(c, "") for c in counts}
    return {
        "metric": METRIC,
        "questions": {c: counts[c] for c in sorted(counts)},
        "sets": kinds,
        "systems": {name: _summary(name, found, systems[name], counts) for name in found},
        "folds": folds,
        "leave_one_out": _estimate(held, found[BASELINE], counts, sorted(counts))
        | paired(chosen_hits, hits[BASELINE]),
        "leave_one_out_by_set": {
            kind: _estimate(held, found[BASELINE], counts, group)
            | paired(
                {k: v for k, v in chosen_hits.items() if k[0] in group},
                {k: v for k, v in hits[BASELINE].items() if k[0] in group},
            )
            for kind, group in _groups(kinds).items()
        },
    }


def _groups(kinds: Mapping[str, str]) -> dict[str, list[str]]:
    """The conversations of each kind (only when the run held more than one kind)."""
    groups: dict[str, list[str]] = {}
    for conversation, kind in sorted(kinds.items()):
        groups.setdefault(kind, []).append(conversation)
    return groups if len(groups) > 1 else {}


def _estimate(
    held: Mapping[str, int], first: Mapping[str, int], counts: Mapping[str, int], keep: list[str]
) -> dict[str, Any]:
    """The held-out total over the conversations ``keep``, beside the first hop's."""
    return {
        "total": total(held, counts, keep),
        "first_hop": total(first, counts, keep),
        "ahead_of_first_hop": sum(held[c] > first[c] for c in keep),
        "conversations": len(keep),
    }


def paired(
    candidate: Mapping[tuple[str, int], bool], baseline: Mapping[tuple[str, int], bool]
) -> dict[str, int]:
    """Question by question: found by the candidate only (wins), by the baseline only (losses)."""
    return {
        "wins": sum(hit and not baseline.get(key, False) for key, hit in candidate.items()),
        "losses": sum(baseline.get(key, False) and not hit for key, hit in candidate.items()),
    }


def _hits(details: Sequence[Mapping[str, Any]]) -> dict[tuple[str, int], bool]:
    """Whether each question of the metric's category was found, by (conversation, position)."""
    return {
        (question["namespace"], index): all_at(question["retrieved"], question["gold"], K) == 1.0
        for index, question in enumerate(details)
        if question["category"] == CATEGORY
    }


def _summary(
    name: str,
    found: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Any],
    counts: Mapping[str, int],
) -> dict[str, Any]:
    """One system's row: per conversation, total, guards, latency, and its rule reading."""
    row: dict[str, Any] = {
        "conversations": {c: found[name][c] / counts[c] for c in sorted(counts)},
        "total": total(found[name], counts, list(counts)),
        **{f"{c} {m}": run.get(c, {}).get(m, 0.0) for c, m in GUARDS},
        "latency_p50_ms": run["latency_ms"]["p50"],
    }
    if name not in (BASELINE, INCUMBENT):
        row["against_full"] = against(found[name], found[INCUMBENT], counts)
    return row
