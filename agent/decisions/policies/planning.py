"""Offline recollection planning: anchors about the question, a target from the gaps."""

from __future__ import annotations

from collections.abc import Sequence

from ripplegraph.agent.memory.text import normalise_cue
from ripplegraph.agent.state import Evidence, Plan, QueryCues


def _spread(ranked: Sequence[Evidence], cues: QueryCues, max_anchors: int) -> list[Evidence]:
    """Anchors that carry what the question is about, one per session first, best-ranked first.

    A question's content terms ("books", "read") say what the walk should reach; its names
    alone match half a two-person conversation.  One anchor per session spreads the walk over
    the sessions a set's members are spread across; a memory of fewer sessions than anchors
    still gets all its anchors.
    """
    content = set(cues.terms)
    wanted = {normalise_cue(p) for p in [*cues.people, *cues.places]} | content
    fresh = [item for item in ranked if not item.anchor]
    about = [item for item in fresh if item.memory.terms & content]
    sharing = [item for item in fresh if item.memory.terms & wanted]
    candidates = list({item.memory.id: item for item in [*about, *sharing, *fresh]}.values())
    spread: list[Evidence] = []
    sessions: set[str] = set()
    for item in candidates:
        if item.memory.provenance.session_id not in sessions:
            sessions.add(item.memory.provenance.session_id)
            spread.append(item)
    chosen = {item.memory.id for item in spread}
    rest = [item for item in candidates if item.memory.id not in chosen]
    return [*spread, *rest][:max_anchors]


def plan_recollection(
    query: str,
    cues: QueryCues,
    ranked: Sequence[Evidence],
    missing: Sequence[str],
    max_anchors: int,
    planned: bool,
    spread: bool = True,
) -> Plan:
    """Pick ≤ ``max_anchors`` anchors and describe the missing support as a target.

    Planned: anchors are the best-ranked evidence about the question, one per session first;
    the target keeps the query as its restatement (its embedding is already cached, so
    expansion costs no second model call) and carries what is missing, then the query's
    terms, as target terms matched lexically.  Unplanned (the ablation): the top items, and
    the query's own terms.  ``spread=False`` keeps the plan but anchors on the top items.
    """
    anchors = (
        _spread(ranked, cues, max_anchors) if planned and spread else list(ranked[:max_anchors])
    )
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
