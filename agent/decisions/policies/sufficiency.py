"""Offline sufficiency: is every part of the question supported by the evidence so far.

Coverage-based, after RippleMem's controller: every query cue and content term must appear in
the top evidence, and multi-part questions ("and", "both", "how many", "should I") need more
than one supporting memory from different sessions.  It names what is missing, which becomes
the expansion target.  Coverage cannot see a set that is not yet whole (three of a person's
five books cover "books") nor a turn that answers without the question's words, so a
question takes one round of recollection even when covered, if the rounds allow.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ripplegraph.agent.memory.text import normalise_cue
from ripplegraph.agent.state import Decision, Evidence, QueryCues

COVERAGE_WINDOW = 10  # the evidence a reader would look at first
UNSEEN = "what coverage cannot see"


@dataclass(frozen=True)
class Verdict:
    """The controller's decision and its reason."""

    decision: Decision
    missing: list[str]
    reason: str


def missing_support(cues: QueryCues, ranked: Sequence[Evidence]) -> list[str]:
    """Query cues and terms no top evidence mentions, and a missing second session if needed."""
    top = list(ranked[:COVERAGE_WINDOW])
    covered: set[str] = set()
    for item in top:
        covered |= item.memory.terms
    wanted = [normalise_cue(p) for p in [*cues.people, *cues.places]] + cues.terms
    missing = [w for w in wanted if w not in covered]
    if cues.multi_part:
        supporting = {
            item.memory.provenance.session_id for item in top if item.memory.terms & set(wanted)
        }
        if len(supporting) < 2:
            missing.append("support from another session")
    return missing


class OfflineSufficiency:
    """Coverage check; refine decision questions once; recollect once, and again while missing."""

    def decide(
        self,
        cues: QueryCues,
        ranked: Sequence[Evidence],
        *,
        refined: bool,
        can_refine: bool,
        expanded: bool,
    ) -> Verdict:
        """Stop, expand towards the missing support, or refine a decision question."""
        missing = missing_support(cues, ranked)
        if cues.decision and not refined and can_refine:
            return Verdict("refine", missing, "advice/plan question: look for constraints first")
        if missing:
            return Verdict("expand", missing, "not covered: " + ", ".join(missing))
        if not expanded:
            return Verdict("expand", [UNSEEN], "covered, but not yet recollected around it")
        return Verdict("stop", [], "every query cue and term is covered by the evidence")


def rounds_spent(rounds: int, limit: int, missing: Sequence[str]) -> str:
    """Why a recall that asked for another round stopped, in words that mean what they say.

    The rounds are spent; the words no top evidence holds are named as such (a turn may
    answer without them: "handed out" for "gave"), and a covered question says so.
    """
    spent = f"recollection rounds spent ({rounds} of {limit})"
    unmatched = [m for m in missing if m != UNSEEN]
    if unmatched:
        return f"{spent}; no top evidence holds the words: {', '.join(unmatched)}"
    return f"{spent}; every cue of the question is covered"
