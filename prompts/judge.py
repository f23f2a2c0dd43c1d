"""Role: the benchmark judge — is a generated answer correct against the reference (LoCoMo)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ripplegraph.prompts.evidence import quote
from ripplegraph.prompts.role import Role

INSTRUCTIONS = """
You grade an answer to a question about a long conversation against the reference answer.
The answer is correct when it states what the reference states (same facts; wording,
extra detail and date formats may differ); it is wrong when it misses or contradicts a part
of the reference, or says memory has no answer while the reference has one.
"""


class JudgeOutput(BaseModel):
    """A binary verdict with its reason."""

    correct: bool
    reason: str = Field(min_length=1, max_length=400)


ROLE = Role("judge", INSTRUCTIONS, JudgeOutput, max_output_tokens=150)


def render(question: str, reference: str, answer: str) -> str:
    """The question, the reference answer and the answer to grade."""
    return (
        f"<question>{quote(question)}</question>\n<reference>{quote(reference)}</reference>\n"
        f"<answer>{quote(answer)}</answer>"
    )
