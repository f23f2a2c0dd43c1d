"""Offline sufficiency: is every part of the question supported by the evidence so far.

Coverage-based, after RippleMem's controller: every query cue and content term must appear in
the top evidence, and multi-part questions ("and", "both", "how many", "should I") need more
than one supporting memory from different sessions.  It names what is missing, which becomes
the expansion target.  Coverage cannot see a set that is not yet whole (three of a person's
five books cover "books") nor a turn that answers without the question's words, so a
question takes one round of recollection even when covered, if the rounds allow.  After a
round, another is asked for only while what is missing could still be found: a term no
memory of the namespace holds, or a second session in a one-session memory, is not there to
be reached, however far the walk goes.  A decision the asker makes for themselves ("should
I…") is recollected once: its constraints are what counterfactual refinement looks for, and a
further round completes sets, not constraints.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ripplegraph.agent.memory.text import normalise_cue
from ripplegraph.agent.state import Decision, Evidence, QueryCues

COVERAGE_WINDOW = 10  # the evidence a reader would look at first
UNSEEN = "what coverage cannot see"
ANOTHER_SESSION = "support from another session"
NOTHING_TO_FIND = "nothing missing is in this memory"
OWN_DECISION = "a decision of the asker's own is recollected once"


@dataclass(frozen=True)
class Verdict:
    """The controller's decision and its reason."""

    decision: Decision
    missing: list[str]
    reason: str
    stopped_by: str = ""  # why a stop with support still missing stops (the recall's reason)


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
            missing.append(ANOTHER_SESSION)
    return missing


def findable(missing: Sequence[str], held: Sequence[str], sessions: int) -> list[str]:
    """What of ``missing`` a memory could still supply.

    ``held`` are the missing terms some memory of the namespace holds; another session can
    be found only in a memory of more than one.
    """
    return [m for m in missing if m in held or (m == ANOTHER_SESSION and sessions > 1)]


Findable = Callable[[Sequence[str]], Sequence[str]]
"""What of the missing support the namespace could still supply (``findable``)."""


class OfflineSufficiency:
    """Coverage check; refine decision questions once; recollect once, again while findable."""

    def decide(
        self,
        cues: QueryCues,
        ranked: Sequence[Evidence],
        *,
        refined: bool,
        can_refine: bool,
        expanded: bool,
        reachable: Findable | None = None,
        own_decisions_once: bool = False,
    ) -> Verdict:
        """Stop, expand towards the missing support, or refine a decision question.

        ``reachable`` names what of the missing support could still be found (without it,
        everything missing could); it is asked once a round has run (``expanded``), since a
        round also completes sets.  With ``own_decisions_once``, a first-person decision
        stops after its round.
        """
        missing = missing_support(cues, ranked)
        if cues.decision and not refined and can_refine:
            return Verdict("refine", missing, "advice/plan question: look for constraints first")
        uncovered = "not covered: " + ", ".join(missing)
        if missing and expanded and own_decisions_once and cues.decision and cues.first_person:
            return Verdict("stop", missing, uncovered, OWN_DECISION)
        if missing and expanded and reachable is not None and not reachable(missing):
            return Verdict("stop", missing, uncovered, NOTHING_TO_FIND)
        if missing:
            return Verdict("expand", missing, uncovered)
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
