"""How memories appear in a prompt or an evidence context: as quoted data, never as instructions.

Memory text is whatever people said; some of it will read like instructions ("ignore previous
instructions…").  Every memory is rendered inside its own ``<memory>`` element with ``<``, ``>``
and ``&`` escaped in its text, so no memory can close its element, open another, or pose as a
rule or a system message; prompts say that everything inside ``<memories>`` is quoted data.
Quotes are escaped only inside attributes: a reader sees "I'm", not "I&#x27;m".
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from ripplegraph.agent.memory import MemoryUnit, RootUnit
from ripplegraph.agent.state import Evidence


def quote(text: str) -> str:
    """Text made inert inside an attribute's quotes (``<``, ``>``, ``&`` and quotes escaped)."""
    return escape(text, quote=True)


def inert(text: str) -> str:
    """Text made inert as an element's content: only ``<``, ``>`` and ``&`` escaped."""
    return escape(text, quote=False)


def render_memory(memory: MemoryUnit, via: str = "") -> str:
    """One memory as a ``<memory>`` element with its id, date and session as attributes."""
    when = f"{memory.provenance.session_time:%Y-%m-%d}" if memory.provenance.session_time else "?"
    attributes = (
        f'id="{quote(memory.id)}" date="{when}" session="{quote(memory.provenance.session_id)}"'
    )
    if via:
        attributes += f' via="{quote(via)}"'
    return f"<memory {attributes}>{inert(memory.text)}</memory>"


def render_memories(memories: Sequence[MemoryUnit]) -> str:
    """A block of memories for a prompt."""
    body = "\n".join(render_memory(m) for m in memories)
    return f"<memories>\n{body}\n</memories>" if body else "<memories/>"


def render_evidence(evidence: Sequence[Evidence], roots: Sequence[RootUnit]) -> str:
    """The evidence context: root rules first (with evidence ids), then ranked evidence."""
    parts: list[str] = []
    if roots:
        parts.append("<rules>")
        parts += [
            f'<rule id="{quote(r.id)}" evidence="{quote(" ".join(r.evidence_ids))}">'
            f"{inert(r.rule)}</rule>"
            for r in roots
        ]
        parts.append("</rules>")
    if evidence:
        parts.append("<memories>")
        parts += [
            render_memory(item.memory, ", ".join(f"{s.channel}#{s.rank}" for s in item.sources[:3]))
            for item in evidence
        ]
        parts.append("</memories>")
    else:
        parts.append("<memories/>\n(no memory supports this question)")
    return "\n".join(parts)
