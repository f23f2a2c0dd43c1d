"""One type for what the LLM roles cost: calls and tokens, spent or still allowed.

A role call, a step's several calls, a PMI scoring, a run's limit and what is left of it are
all a ``Spend``: they add up, and ``left_of`` says what remains of a limit, so no node
subtracts or sums the two counters by hand.  It depends on nothing, so prompts, the call path,
the roles and the nodes can all use it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Spend:
    """LLM calls and tokens (prompt + reply)."""

    calls: int = 0
    tokens: int = 0

    def __add__(self, other: Spend) -> Spend:
        """Both spends together."""
        return Spend(self.calls + other.calls, self.tokens + other.tokens)

    def left_of(self, limit: Spend) -> Spend:
        """What remains of ``limit`` once this is spent (negative where it went over)."""
        return Spend(limit.calls - self.calls, limit.tokens - self.tokens)

    def within(self, limit: Spend) -> bool:
        """Whether this spend keeps to ``limit`` in both counters."""
        return self.calls <= limit.calls and self.tokens <= limit.tokens

    def counters(self) -> dict[str, int]:
        """The graph state's additive counters for this spend (a node's update)."""
        return {"llm_calls": self.calls, "tokens": self.tokens}


NOTHING = Spend()
"""No calls, no tokens."""
