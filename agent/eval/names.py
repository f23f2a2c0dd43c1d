"""What a benchmark can be asked for, named without importing the machinery that runs it.

The command line's help lists these names; ``--help`` must not build the graphs to do so.
"""

from __future__ import annotations

from enum import StrEnum

from ripplegraph.agent.recall_config import RecipeName

GRAPH_SYSTEMS: dict[str, RecipeName] = {
    "first_hop": "first_hop",
    "ripplegraph": "full",
    "no_expansion": "no_expansion",
    "no_structural": "no_structural",
    "no_planning": "no_planning",
    "no_roots": "no_roots",
    "no_counterfactual": "no_counterfactual",
    "hand_ranked": "hand_ranked",
}
"""The RippleGraph systems: the recall graph under a named recipe."""

SYSTEMS = ("bm25", "dense", "hybrid", *GRAPH_SYSTEMS)
"""Every system a recall benchmark compares: the baselines, then the graph's."""

DEFAULT_VARIATIONS = (
    "recollect_covered=false",
    "structural_edges=false",
    "dialogue_edges=false",
    "only_findable=false",
    "spread_anchors=false",
    "rounds=1,3",
    "hops=1,3",
    "max_anchors=2,5",
)
"""The folds' default variants: each recollection mechanism switched (the alternatives tried
switched back on), and the recollection's budgets a step either side."""


class Leave(StrEnum):
    """What a fold of ``bench ranker`` leaves out."""

    CONVERSATION = "conversation"
    KIND = "kind"
    """Every conversation of one kind: the estimate for a kind there is no sample of."""
