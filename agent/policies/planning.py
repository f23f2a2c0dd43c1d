"""Offline recollection planning: anchors sharing the query's cues, a target from the gaps."""

from __future__ import annotations

from collections.abc import Sequence

from ripplegraph.agent.state import Evidence, Plan, QueryCues
from ripplegraph.agent.text import normalise_cue


def _overlap(item: Evidence, cues: QueryCues) -> int:
    wanted = {normalise_cue(p) for p in [*cues.people, *cues.places]} | set(cues.terms)
    return len(item.memory.terms & wanted)


def plan_recollection(
    query: str,
    cues: QueryCues,
    ranked: Sequence[Evidence],
    missing: Sequence[str],
    max_anchors: int,
    planned: bool,
) -> Plan:
    """Pick ≤ ``max_anchors`` anchors and describe the missing support as a target.

    Planned: anchors are the best-ranked evidence sharing query cues; the target keeps the
    query as its restatement (its embedding is already cached, so expansion costs no second
    model call) and carries what is missing, then the query's terms, as target terms matched
    lexically.  Unplanned
    (the ablation): the top items, and the query's own terms.
    """
    if planned:
        sharing = [item for item in ranked if _overlap(item, cues) > 0 and not item.anchor]
        anchors = (sharing or list(ranked))[:max_anchors]
    else:
        anchors = list(ranked[:max_anchors])
    missing_terms = [m for m in missing if " " not in m]
    return Plan(
        anchors=[a.memory.id for a in anchors],
        target=query,
        target_people=list(cues.people),
        target_places=list(cues.places),
        # The missing terms lead the target but do not replace the question's own terms: a
        # one-word target lets any memory with that word outrank better-aligned neighbours.
        target_terms=list(dict.fromkeys([*missing_terms, *cues.terms]))
        if planned
        else list(cues.terms),
    )
