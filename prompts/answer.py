"""Role: the answer — grounded in the recalled evidence, citing memory ids."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ripplegraph.prompts.evidence import inert
from ripplegraph.prompts.role import Role

INSTRUCTIONS = """
Answer the user's message from the recalled memories. Respect every rule and constraint they
hold, even ones the message does not mention, and say so when one changes your answer. Cite
the ids of the memories you rely on. If memory does not support an answer, say that memory
holds nothing on it (set supported to false) instead of guessing.
"""


class AnswerOutput(BaseModel):
    """The reply, the memories it cites, and whether memory supported it."""

    answer: str = Field(min_length=1, max_length=4000)
    cited_ids: list[str] = Field(default_factory=list, max_length=30)
    supported: bool = True


ROLE = Role("answer", INSTRUCTIONS, AnswerOutput, max_output_tokens=700)


def render(message: str, evidence_context: str) -> str:
    """The user's message and the rendered evidence context (rules, then memories)."""
    return f"<message>{inert(message)}</message>\n{evidence_context}"
