"""Role: pick one answer of a multiple-choice question from recalled memories (IMLogic)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ripplegraph.prompts.evidence import inert
from ripplegraph.prompts.role import Role

INSTRUCTIONS = """
The user asks for advice or a recommendation. Using the recalled memories about the user,
pick the one option that answers best for this user: respect every constraint, state, goal
and change the memories hold, even ones the question does not mention. Reply with the
option's letter.
"""

Letter = Literal["A", "B", "C", "D"]


class ChoiceOutput(BaseModel):
    """The chosen option's letter and why."""

    choice: Letter
    reason: str = Field(default="", max_length=400)


ROLE = Role("choice", INSTRUCTIONS, ChoiceOutput, max_output_tokens=150)


def render(question: str, options: list[str], memories: str) -> str:
    """The question, its lettered options and the recalled memories."""
    lettered = "\n".join(
        f'<option letter="{letter}">{inert(text)}</option>'
        for letter, text in zip("ABCD", options, strict=False)
    )
    return f"<question>{inert(question)}</question>\n<options>\n{lettered}\n</options>\n{memories}"
