"""Graph states and their input/output contracts."""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from pydantic import BaseModel, Field, StringConstraints

from ripplegraph.agent.memory import (
    MAX_QUERY_CHARS,
    MemoryUnit,
    Namespace,
    RootUnit,
    Session,
    TimeInterval,
)
from ripplegraph.agent.spend import NOTHING, Spend


class TraceEvent(BaseModel):
    """One node's account of what it decided and why."""

    node: str
    decision: str
    reason: str
    added: list[str] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)
    budget: dict[str, int] | None = None  # recall counters after this step


class Spending(BaseModel):
    """The LLM counters a graph adds up as its steps report what they spent."""

    llm_calls: Annotated[int, operator.add] = 0
    tokens: Annotated[int, operator.add] = 0

    @property
    def spent(self) -> Spend:
        """The counters as one spend."""
        return Spend(self.llm_calls, self.tokens)


class IngestInput(BaseModel):
    """A batch of dialogue sessions to remember in one namespace."""

    namespace: Namespace
    sessions: list[Session]


class IngestOutput(Spending):
    """What the write path stored."""

    written_ids: list[str] = Field(default_factory=list)
    units_total: int = 0
    edges_added: dict[str, int] = Field(default_factory=dict)
    roots_touched: list[str] = Field(default_factory=list)
    trace: Annotated[list[TraceEvent], operator.add] = Field(default_factory=list)


class IngestState(IngestInput, IngestOutput):
    """The ingest graph's working state."""

    drafts: list[MemoryUnit] = Field(default_factory=list)
    resumed_ids: list[str] = Field(default_factory=list)  # stored earlier, never linked


# --- recall ----------------------------------------------------------------------------------

Channel = Literal["semantic", "lexical", "exact", "cue", "expansion", "root", "counterfactual"]


class EvidenceSource(BaseModel):
    """One way a memory reached the pool: which channel, at what rank and score, by what path.

    ``path`` starts where the walk started (an anchor, a root unit, a risk statement);
    ``edges`` names, in order, the type of each memory-graph edge walked to this memory (the
    last one arrives here), so a trace shows how a memory was reached, not only that it was.
    """

    channel: Channel
    rank: int
    score: float
    path: list[str] = Field(default_factory=list)
    edges: list[str] = Field(default_factory=list)
    round: int = 0


def risk_label(index: int) -> str:
    """How evidence sources name the ``index``-th (0-based) statement in ``counterfactuals``."""
    return f"risk {index + 1}"


class Evidence(BaseModel):
    """A memory in the evidence pool with every source that reached it."""

    memory: MemoryUnit
    sources: list[EvidenceSource] = Field(default_factory=list)
    anchor: bool = False
    # An active standing fact of the person a decision question is about (ActMem's
    # constraint, RootMem's root evidence): the answer needs it whatever its wording.
    standing: bool = False
    score: float = 0.0
    # ρ's terms as assembly computed them: the query–memory cosine and the weighted query,
    # path-support, anchor and standing terms that add up to ``score``.
    score_parts: dict[str, float] = Field(default_factory=dict)


def merge_pool(left: dict[str, Evidence], right: dict[str, Evidence]) -> dict[str, Evidence]:
    """Merge by memory id: sources accumulate, the flags stick, the last score wins."""
    merged = dict(left)
    for mid, item in right.items():
        old = merged.get(mid)
        if old is None:
            merged[mid] = item
            continue
        seen = {(s.channel, s.rank, tuple(s.path), s.round) for s in old.sources}
        extra = [s for s in item.sources if (s.channel, s.rank, tuple(s.path), s.round) not in seen]
        merged[mid] = old.model_copy(
            update={
                "sources": old.sources + extra,
                "anchor": old.anchor or item.anchor,
                "standing": old.standing or item.standing,
                "score": item.score if item.score else old.score,
                "score_parts": item.score_parts if item.score else old.score_parts,
            }
        )
    return merged


class QueryCues(BaseModel):
    """What the query is about: grounded people, places, time, content terms, and its form."""

    people: list[str] = Field(default_factory=list)
    places: list[str] = Field(default_factory=list)
    time: TimeInterval | None = None
    terms: list[str] = Field(default_factory=list)
    multi_part: bool = False
    decision: bool = False
    first_person: bool = False  # asked as the memory owner's own ("can I…", "for us")
    # A factual question without its people and place names: the cue channel matches names
    # exactly, so semantic alignment measures the rest (MiniLM lets a name dominate a short
    # question, and in a dialogue every memory carries a speaker's name).  Empty for decision
    # questions, where the person named is the point: her constraints decide.
    content: str = ""


class Plan(BaseModel):
    """A recollection plan: where to expand from and what the missing support looks like."""

    anchors: list[str] = Field(default_factory=list)
    target: str = ""
    target_people: list[str] = Field(default_factory=list)
    target_places: list[str] = Field(default_factory=list)
    target_terms: list[str] = Field(default_factory=list)


class Budget(Spending):
    """Budget use of one recall: counters against the context's limits."""

    rounds: int = 0
    hops: int = 0
    refinements: int = 0
    limits: dict[str, int] = Field(default_factory=dict)


Decision = Literal["stop", "expand", "refine"]


class RecallInput(BaseModel):
    """The recall graph's contract in: a question and whose memory to search."""

    query: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_QUERY_CHARS)
    ]
    namespace: Namespace
    cues: QueryCues | None = None


class RecallOutput(BaseModel):
    """The recall graph's contract out: ranked evidence with provenance, and how it got there."""

    evidence: list[Evidence] = Field(default_factory=list)
    roots: list[RootUnit] = Field(default_factory=list)
    context: str = ""
    stop_reason: str = ""
    budget: Budget = Field(default_factory=Budget)
    trace: Annotated[list[TraceEvent], operator.add] = Field(default_factory=list)


class RecallState(RecallInput, RecallOutput, Spending):
    """The recall graph's working state; counters add up through their reducers."""

    pool: Annotated[dict[str, Evidence], merge_pool] = Field(default_factory=dict)
    plan: Plan | None = None
    proposed_plan: Plan | None = None  # the LLM controller's, validated by plan_recollection
    decision: Decision = "stop"
    missing: list[str] = Field(default_factory=list)
    counterfactuals: list[str] = Field(default_factory=list)
    rounds: Annotated[int, operator.add] = 0
    hops: Annotated[int, operator.add] = 0
    refinements: Annotated[int, operator.add] = 0

    @property
    def alignment_query(self) -> str:
        """What pooled memories are aligned with: the question's content, else the question."""
        return (self.cues.content if self.cues else "") or self.query


_COUNTERS = ("llm_calls", "tokens", "rounds", "hops", "refinements")


def spent_after(state: RecallState, spend: Spend = NOTHING, **increments: int) -> dict[str, int]:
    """The recall counters once this step's spend and increments are added (its trace event)."""
    increments |= spend.counters()
    return {name: getattr(state, name) + increments.get(name, 0) for name in _COUNTERS}


def budget_use(state: RecallState, limits: dict[str, int]) -> Budget:
    """The state's counters beside the limits they are checked against."""
    return Budget(
        llm_calls=state.llm_calls,
        tokens=state.tokens,
        rounds=state.rounds,
        hops=state.hops,
        refinements=state.refinements,
        limits=limits,
    )


# --- chat ------------------------------------------------------------------------------------


class ChatInput(BaseModel):
    """The chat agent's contract in: the conversation so far."""

    messages: Annotated[list[AnyMessage], add_messages]


class ChatOutput(BaseModel):
    """The chat agent's contract out: the conversation with its reply."""

    messages: Annotated[list[AnyMessage], add_messages]


class ChatState(RecallState, IngestState):
    """Chat = recall (subgraph) → respond → remember (ingest subgraph); it shares their keys."""

    messages: Annotated[list[AnyMessage], add_messages] = Field(default_factory=list)
    query: str = ""
    namespace: str = "default"
    sessions: list[Session] = Field(default_factory=list)
