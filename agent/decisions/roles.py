"""The LLM roles behind the graph's decisions, mapped onto the graph's own types.

Each function asks one role through the call path and turns a valid reply into memory units,
plans, root units or edges — checking every id the model names against what it was shown.
Where the reply is missing or invalid, the step's offline policy runs instead and the
returned ``Usage`` says so, for the node's trace event.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ripplegraph.agent.decisions.policies.answer import extractive_answer
from ripplegraph.agent.decisions.policies.extraction import OfflineExtractor
from ripplegraph.agent.memory import MemoryUnit, Provenance, RootUnit, Session, TimeInterval, Turn
from ripplegraph.agent.models.llm import Choice, Outcome, RoleCaller
from ripplegraph.agent.spend import NOTHING, Spend
from ripplegraph.agent.state import Decision, Evidence, Plan, QueryCues
from ripplegraph.agent.store.ids import memory_id
from ripplegraph.prompts import answer as answer_prompt
from ripplegraph.prompts import (
    controller,
    counterfactual,
    extraction,
    root_consolidation,
    root_router,
)
from ripplegraph.prompts.answer import AnswerOutput
from ripplegraph.prompts.root_consolidation import ConsolidationOutput

T = TypeVar("T")


@dataclass
class Usage:
    """Calls and tokens a step spent, and what its trace should say about the model."""

    spent: Spend = NOTHING
    notes: list[str] = field(default_factory=list)
    fallbacks: int = 0
    served: int = 0
    valid: int = 0
    modes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, outcome: Outcome[Any], label: str = "") -> None:
        """Count one role call (and note it when it fell back or needed retries)."""
        self.spent += outcome.spent
        self.served += outcome.served
        self.valid += outcome.valid
        self.modes += outcome.modes
        self.seconds += outcome.seconds
        if outcome.value is None:
            self.fallbacks += 1
        if outcome.events:
            self.notes.append(f"{label}{outcome.note}" if label else outcome.note)

    def absorb(self, other: Usage) -> None:
        """Add another step's spending and notes to this one."""
        self.spent += other.spent
        self.fallbacks += other.fallbacks
        self.notes += other.notes
        self.served += other.served
        self.valid += other.valid
        self.modes += other.modes
        self.seconds += other.seconds

    def charge(self, spend: Spend) -> None:
        """Count a model request made outside a role (a PMI scoring)."""
        self.spent += spend

    def left(self, allowance: Spend) -> Spend:
        """What remains of ``allowance`` after this step so far."""
        return self.spent.left_of(allowance)

    @property
    def note(self) -> str:
        """The notes in one line."""
        return "; ".join(self.notes)

    def trace(self, role: str) -> dict[str, Any]:
        """What a trace event records of this step's model use (role, spending, fallback)."""
        return {
            "role": role,
            "calls": self.spent.calls,
            "served": self.served,
            "valid": self.valid,
            "tokens": self.spent.tokens,
            "seconds": round(self.seconds, 2),
            "output": ", ".join(dict.fromkeys(self.modes)) or "-",
            "fallback": bool(self.fallbacks),
            "note": self.note,
        }


# --- write path --------------------------------------------------------------------------------


def _turn_id(session: Session, position: int, turn: Turn) -> str:
    return turn.id or f"{session.id}:{position}"


def windows(session: Session, size: int, overlap: int) -> list[tuple[list[Turn], set[str]]]:
    """Consecutive windows of ``size`` turns, each with the ids of its new turns.

    The first ``overlap`` turns of every window after the first are context only: their
    events belong to the previous window, so overlapping windows do not store them twice.
    """
    size = max(size, 1)
    overlap = min(max(overlap, 0), size - 1)
    turns = [
        t.model_copy(update={"id": _turn_id(session, i, t)}) for i, t in enumerate(session.turns, 1)
    ]
    result = []
    start = 0
    while start < len(turns):
        context_start = max(0, start - overlap)
        chunk = turns[context_start : start + size - (start - context_start)]
        new = {t.id for t in turns[start : context_start + len(chunk)] if t.id}
        result.append((chunk, new))
        start = context_start + len(chunk)
    return result


def extract_with_model(
    caller: RoleCaller,
    namespace: str,
    sessions: Sequence[Session],
    offline: OfflineExtractor,
    known: tuple[Sequence[str], Sequence[str]],
    allowance: Spend,
    window: int,
    overlap: int,
) -> tuple[list[MemoryUnit], Usage]:
    """Memory units from windowed LLM extraction; a window whose call fails is extracted offline."""
    usage = Usage()
    units: list[MemoryUnit] = []
    for session in sessions:
        for turns, new_ids in windows(session, window, overlap):
            outcome = caller(
                extraction.ROLE, extraction.render(session, turns, new_ids), usage.left(allowance)
            )
            usage.add(outcome, f"window {session.id}/{turns[0].id}: ")
            new_turns = [t for t in turns if t.id in new_ids]
            if outcome.value is None:
                part = Session(id=session.id, date=session.date, turns=new_turns)
                units += offline.extract(namespace, [part], *known)
                continue
            speakers = {t.id: t.speaker for t in new_turns}
            for event in outcome.value.events:
                cited = [tid for tid in event.turn_ids if tid in new_ids]
                if not cited:
                    continue  # only context turns, or ids the window does not have
                time = None
                if event.time_start is not None:
                    start = event.time_start.replace(tzinfo=None)
                    end = (event.time_end or event.time_start).replace(tzinfo=None)
                    time = (
                        TimeInterval.day_of(start)
                        if end <= start
                        else TimeInterval(start=start, end=end)
                    )
                elif session.date is not None:
                    time = TimeInterval.day_of(session.date)
                provenance = Provenance(
                    session_id=session.id,
                    turn_ids=tuple(cited),
                    speaker=speakers.get(cited[0]),
                    session_time=session.date,
                )
                units.append(
                    MemoryUnit(
                        id=memory_id(namespace, provenance, event.restatement),
                        namespace=namespace,
                        text=event.restatement.strip(),
                        people=tuple(event.people),
                        places=tuple(event.places),
                        time=time,
                        kind=event.kind,
                        provenance=provenance,
                    )
                )
    return units, usage


def consolidate_roots(
    caller: RoleCaller,
    namespace: str,
    units: Sequence[RootUnit],
    memories: Sequence[MemoryUnit],
    allowance: Spend,
    max_units: int,
) -> tuple[list[RootUnit] | None, Usage]:
    """Φ_C: the unit set after applying the model's operations (``None`` = call failed)."""
    usage = Usage()
    outcome = caller(root_consolidation.ROLE, root_consolidation.render(units, memories), allowance)
    usage.add(outcome)
    if outcome.value is None:
        return None, usage
    return apply_operations(namespace, units, memories, outcome.value, max_units), usage


def apply_operations(
    namespace: str,
    units: Sequence[RootUnit],
    memories: Sequence[MemoryUnit],
    reply: ConsolidationOutput,
    max_units: int,
) -> list[RootUnit]:
    """Apply update/create/merge operations, keeping only evidence ids that exist."""
    by_id = {u.id: u for u in units}
    known_evidence = {m.id for m in memories} | {e for u in units for e in u.evidence_ids}
    for op in reply.operations:
        evidence = [e for e in dict.fromkeys(op.evidence_ids) if e in known_evidence]
        if not evidence:
            continue
        if op.op == "merge":
            for gone in op.merge_ids:
                if gone != op.unit_id:
                    merged = by_id.pop(gone, None)
                    if merged is not None:
                        evidence += [e for e in merged.evidence_ids if e not in evidence]
        if op.op == "create" or op.unit_id not in by_id:
            digest = hashlib.sha256(f"{namespace}|{op.person}|{op.topic}".encode()).hexdigest()
            unit_id = f"root_{digest[:12]}"
        else:
            unit_id = str(op.unit_id)
        by_id[unit_id] = RootUnit(
            id=unit_id,
            rule=" ".join(r.strip() for r in op.rules),
            person=op.person,
            topic=op.topic,
            evidence_ids=evidence,
        )
    return list(by_id.values())[:max_units]


# --- recall ------------------------------------------------------------------------------------


@dataclass
class Decided(Generic[T]):
    """A step's decision: its role's when a model answered, else its offline policy's."""

    value: T
    usage: Usage
    asked: bool  # a model was asked: its spend, and any fallback, belong in the trace
    by_model: bool

    def noted(self, text: str) -> str:
        """``text`` with what the call path noted (retries, re-asks), for the trace."""
        return text + (f" [{self.usage.note}]" if self.usage.note else "")

    def details(self, role: str) -> dict[str, Any]:
        """The trace details of the model's use (``{}`` when none was asked)."""
        return {"llm": self.usage.trace(role)} if self.asked else {}


def decide(
    caller: RoleCaller | None,
    offline: Callable[[], T],
    ask: Callable[[RoleCaller], tuple[T | None, Usage]],
) -> Decided[T]:
    """The one seam of a deciding node: the role when a model is configured, else the policy.

    The offline policy also decides when the role's reply stays invalid or the budget is
    spent; the spend is counted either way.
    """
    if caller is None:
        return Decided(offline(), Usage(), asked=False, by_model=False)
    value, usage = ask(caller)
    if value is None:
        return Decided(offline(), usage, asked=True, by_model=False)
    return Decided(value, usage, asked=True, by_model=True)


def control(
    caller: RoleCaller,
    query: str,
    cues: QueryCues,
    ranked: Sequence[Evidence],
    allowance: Spend,
) -> tuple[tuple[Decision, str, Plan | None] | None, Usage]:
    """The controller's (decision, reason, proposed plan), anchors as proposed.

    ``plan_recollection`` keeps the anchors that are in the pool, and traces how many were.
    """
    usage = Usage()
    outcome = caller(controller.ROLE, controller.render(query, cues, ranked), allowance)
    usage.add(outcome)
    reply = outcome.value
    if reply is None:
        return None, usage
    if reply.decision == "stop":
        return ("stop", reply.reason, None), usage
    plan = Plan(
        anchors=list(dict.fromkeys(reply.anchors)),
        target=reply.target,
        target_people=reply.target_people,
        target_places=reply.target_places,
    )
    return ("expand", reply.reason, plan), usage


def route(
    caller: RoleCaller, query: str, units: Sequence[RootUnit], allowance: Spend
) -> tuple[tuple[list[RootUnit], str] | None, Usage]:
    """Φ_R in one batched call: the units whose rules apply, and why."""
    usage = Usage()
    if not units:
        return ([], "no root units"), usage
    outcome = caller(
        root_router.ROLE,
        root_router.render(query, units),
        allowance,
        {"active": Choice([u.id for u in units])},
    )
    usage.add(outcome)
    if outcome.value is None:
        return None, usage
    wanted = set(outcome.value.active)
    return ([u for u in units if u.id in wanted], outcome.value.reason), usage


def risks(
    caller: RoleCaller, query: str, ranked: Sequence[Evidence], allowance: Spend
) -> tuple[list[str] | None, Usage]:
    """Counterfactual risk statements for the request."""
    usage = Usage()
    outcome = caller(counterfactual.ROLE, counterfactual.render(query, ranked), allowance)
    usage.add(outcome)
    return (outcome.value.risks if outcome.value else None), usage


def answer(
    caller: RoleCaller,
    message: str,
    evidence_context: str,
    evidence_ids: set[str],
    allowance: Spend,
) -> tuple[AnswerOutput | None, Usage]:
    """A grounded answer; citations limited to the evidence actually given."""
    usage = Usage()
    outcome = caller(
        answer_prompt.ROLE,
        answer_prompt.render(message, evidence_context),
        allowance,
        {"cited_ids": Choice(evidence_ids, at_least=1)},
    )
    usage.add(outcome)
    if outcome.value is None:
        return None, usage
    cited = [c for c in outcome.value.cited_ids if c in evidence_ids]
    return outcome.value.model_copy(update={"cited_ids": cited}), usage


def reply(
    caller: RoleCaller | None,
    question: str,
    evidence: Sequence[Evidence],
    evidence_context: str,
    allowance: Spend,
) -> tuple[str, str, Usage]:
    """The answer to show, how it was made (for the trace), and what the model spent.

    The answer role's reply with its citations when a model answers; the offline extractive
    answer without a model, or when the role fails or the budget is spent.
    """
    offline = extractive_answer(question, evidence)
    if caller is None:
        return offline, "offline extractive answer", Usage()
    ids = {e.memory.id for e in evidence}
    result, usage = answer(caller, question, evidence_context, ids, allowance)
    if result is None:
        return offline, f"offline extractive answer ({usage.note})", usage
    sources = f"\n\nSources: {', '.join(result.cited_ids)}" if result.cited_ids else ""
    how = "LLM answer" if result.supported else "LLM answer: memory lacks support"
    return result.answer + sources, how + (f" [{usage.note}]" if usage.note else ""), usage
