"""Retrieval settings as typed, named recipes (like Graphiti's search-config recipes).

``full`` is RippleGraph's method with RippleMem's hyper-parameters; the others switch one
mechanism off, for ablations and for the demo's comparison.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from ripplegraph.agent.learned import Ranker


@dataclass(frozen=True)
class SourceWeights:
    """RippleMem §2.4's per-source weights in the path-support term π(m)."""

    semantic: float = 1.0
    lexical: float = 0.75
    exact: float = 0.75
    """A memory alone holding an identifier of the question: a lexical finding, weighted so."""
    cue: float = 0.9
    expansion: float = 0.85
    root: float = 0.9
    counterfactual: float = 0.85


@dataclass(frozen=True)
class RecallConfig:
    """How the recall graph gathers and ranks evidence."""

    semantic_k: int = 10
    lexical_k: int = 5
    cue_k: int = 5
    exact_terms: bool = True
    """Whether a memory that alone holds an identifier of the question ranks first (``exact``)."""
    expansion: bool = True
    recollect_covered: bool = True
    """Whether a question the first hop covers is still recollected once: coverage cannot see
    a set that is not whole, nor a turn that answers without the question's words."""
    only_findable: bool = True
    """Whether a further round is asked for only while something missing could still be
    found: a term some memory of the namespace holds, or another session when there is one.
    A budget rule: on quality it is a trade between kinds, but without it real chat takes a
    fifth more rounds (``docs/decisions.md``, 2026-12-07)."""
    own_decisions_once: bool = True
    """Whether a decision the asker makes for themselves ("should I…") is recollected once:
    refinement looks for its constraints, and a further round completes sets, not those."""
    planned: bool = True
    spread_anchors: bool = True
    """Whether anchors are the evidence about the question, one per session first (else the
    best-ranked memories)."""
    structural_edges: bool = True
    dialogue_edges: bool = True
    """Whether the walk also steps to the memory written just before or after in the same
    session: a turn of real chat often means something only beside its neighbours."""
    roots: bool = True
    counterfactual: bool = True
    learned: bool = True
    """Whether the learned ranker decides which pooled memories are kept and in what order
    (else ρ does, as it steers the walk)."""
    ranker: Ranker | None = None
    """The learned ranker; ``None`` is the one shipped in the package."""
    learned_walk: bool = True
    """Whether a learned walk model chooses the candidates the walk keeps per channel (else
    the hand score: similarity to the target plus the target's cues held)."""
    walker: Ranker | None = None
    """The learned walk model; ``None`` is the one shipped in the package."""
    max_anchors: int = 3
    top_n_per_channel: int = 5
    root_threshold: float = 0.5
    max_root_units: int = 10
    root_evidence: int = 8
    decision_root_units: int = 2  # units a first-person decision activates offline, best first
    counterfactual_k: int = 5
    lambda_query: float = 1.25
    lambda_path: float = 1.0
    lambda_anchor: float = 0.05
    # A decision question's active standing facts share no words with it ("hard hike" and
    # "seven months pregnant"), so ρ lifts them by a term of their own rather than by
    # similarity: the top window should hold ``counterfactual_k`` of them, and a lifted
    # fact only takes the place of a memory aligned below ``unrelated_below`` (one MiniLM
    # deems unrelated to the question), never of a related one.
    lambda_standing: float = 0.6
    unrelated_below: float = 0.25
    rank_offset: int = 5
    # Questions that ask for a set ("what books…", "how many…", "both…": the query's
    # multi-part cue) gather a pool this many times K before ρ picks K: their evidence is
    # spread over sessions and ranks lower one by one.  Only those: widening every question
    # crowds the pool of a question with one answer.
    set_question_pool: float = 2.0
    weights: SourceWeights = SourceWeights()

    def depth_scale(self, evidence_k: int, asks_for_a_set: bool = False) -> float:
        """How much wider than the paper's 10/5/5 the first hop must be to gather its pool."""
        pool = evidence_k * (self.set_question_pool if asks_for_a_set else 1.0)
        return max(1.0, pool / (self.semantic_k + self.lexical_k + self.cue_k))

    def first_hop_depths(self, evidence_k: int, asks_for_a_set: bool = False) -> dict[str, int]:
        """Per-channel first-hop depth.

        RippleMem's 10/5/5 suit its K = 30 over multi-turn events; with one memory per turn
        they cannot fill K by themselves, so they widen in the same 2:1:1 proportion until
        together they reach K (15/8/8 at K = 30).
        """
        scale = self.depth_scale(evidence_k, asks_for_a_set)
        return {
            "semantic": round(self.semantic_k * scale),
            "lexical": round(self.lexical_k * scale),
            "cue": round(self.cue_k * scale),
        }

    def expansion_width(self, evidence_k: int, asks_for_a_set: bool = False) -> int:
        """Candidates kept per edge channel per round, widened like the first hop."""
        return round(self.top_n_per_channel * self.depth_scale(evidence_k, asks_for_a_set))


RecipeName = Literal[
    "full", "first_hop", "no_expansion", "no_structural", "no_planning", "no_roots",
    "no_counterfactual", "hand_ranked",
]  # fmt: skip

FULL = RecallConfig()
RECIPES: dict[str, RecallConfig] = {
    "full": FULL,
    "first_hop": replace(FULL, expansion=False, roots=False, counterfactual=False, learned=False),
    "no_expansion": replace(FULL, expansion=False),
    "no_structural": replace(FULL, structural_edges=False),
    "no_planning": replace(FULL, planned=False),
    "no_roots": replace(FULL, roots=False),
    "no_counterfactual": replace(FULL, counterfactual=False),
    "hand_ranked": replace(FULL, learned=False, learned_walk=False),
}
