"""One self-contained HTML page that shows why each memory was recalled.

Built only from a recall's final state (what ``ripplegraph ask`` checkpoints): the trace
events give the machine's path and each step's decision and budget; the evidence sources
give the channels, ranks and the paths walked, with their edge types; ρ's parts come from
assembly.  Nothing is looked up again, so the page shows what happened, not what the store
holds now.

The page makes no request of any kind: CSS, script and SVG are inline, a Content Security
Policy allows only those two inline blocks (by hash), and every memory text is escaped, so a
memory cannot add markup or script.  Steps are native ``<details>`` elements; the script only
links the memory graph to the evidence table and opens or closes every step.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ripplegraph.agent.state import RecallState
from ripplegraph.agent.surfaces.trace_page.machine import Machine, Visit, machine_svg
from ripplegraph.agent.surfaces.trace_page.markup import SCRIPT, STYLE, csp_hash, esc, short
from ripplegraph.agent.surfaces.trace_page.neighbourhood import NODE_COLOURS, neighbourhood_svg
from ripplegraph.agent.surfaces.trace_page.sections import (
    COUNTERS,
    evidence_html,
    roots_and_risks_html,
    steps_html,
    walk_steps,
)

__all__ = [
    "PAGE_CSP",
    "SCRIPT",
    "STYLE",
    "Machine",
    "Visit",
    "render_body",
    "render_page",
    "state_from",
    "walk_steps",
]


def _header(state: RecallState, thread_id: str) -> str:
    used, limits = state.budget, state.budget.limits
    spent = used.model_dump()
    cells = "".join(
        f"<tr><th>{esc(name)}</th><td>{spent.get(name, 0)}"
        + (f" / {limits[name]}" if name in limits else "")
        + "</td></tr>"
        for name in COUNTERS
    )
    facts = [
        ("namespace", state.namespace),
        ("stop reason", state.stop_reason or "–"),
        ("evidence", f"{len(state.evidence)} of K = {limits.get('evidence_k', '?')}"),
    ]
    if thread_id:
        facts.append(("thread", thread_id))
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in facts)
    return (
        "<header><h1>RippleGraph recall</h1>"
        f'<div class="q">{esc(state.query)}</div>'
        f"<table><tr><td><table>{rows}</table></td><td><table>{cells}</table></td></tr>"
        "</table></header>"
    )


def _texts(state: RecallState) -> dict[str, str]:
    texts = {mid: item.memory.text for mid, item in state.pool.items()}
    texts.update({item.memory.id: item.memory.text for item in state.evidence})
    return texts


PAGE_CSP = (
    f"default-src 'none'; style-src {csp_hash(STYLE)}; script-src {csp_hash(SCRIPT)}; "
    "img-src 'none'; connect-src 'none'; font-src 'none'; form-action 'none'; base-uri 'none'"
)
"""The file's policy: only its own inline style and script (by hash) run."""


def render_body(state: RecallState, machine: Machine, *, thread_id: str = "") -> str:
    """The page's content without its document: header and sections, styled by ``STYLE``.

    ``ripplegraph ui`` embeds this in its own page (``STYLE`` and ``SCRIPT`` as its files).
    """
    limits = state.budget.limits
    texts = _texts(state)
    legend = "".join(
        f'<span><i class="{kind}"></i>{label}</span>'
        for kind, label in (
            ("query", "first hop (question → memory)"),
            ("semantic", "semantic edge"),
            ("structural", "structural edge"),
            ("dialogue", "the turn before or after"),
            ("causal", "causal edge"),
            ("root", "root unit → its evidence"),
            ("risk", "risk → what it retrieved"),
        )
    ) + "".join(
        f'<span><svg width="12" height="12" viewBox="0 0 12 12"><circle cx="6" cy="6" r="5" '
        f'fill="{colour}"/></svg> {esc(label)}</span>'
        for colour, label in NODE_COLOURS.values()
    )
    return (
        _header(state, thread_id)
        + "<main>"
        + '<section><h2>The machine\'s path</h2><p class="muted">Nodes the run visited are '
        "shaded; the numbers are step numbers (a node run twice shows both).</p>"
        f'<div class="scroll">{machine_svg(machine, Visit.of(state.trace))}</div></section>'
        + '<section><h2>Steps</h2><p><button id="open-all" type="button">open all</button>'
        '<button id="close-all" type="button">close all</button></p>'
        + steps_html(state, limits)
        + "</section>"
        + "<section><h2>Evidence as assembled</h2>"
        '<p class="muted">ρ = λq·a(q,m) + λp·π(m) + λa·anchor(m): alignment with the '
        "question, path support from every source (weight / (offset + rank)), anchor bonus. "
        "Click a row to find the memory in the graph below.</p>"
        + evidence_html(state.evidence, texts)
        + "</section>"
        + '<section><h2>Memory neighbourhood</h2><p class="legend">'
        + legend
        + '</p><div class="scroll">'
        + neighbourhood_svg(state)
        + "</div></section>"
        + "<section><h2>Roots and risks</h2>"
        + roots_and_risks_html(state, texts)
        + "</section></main>"
    )


def render_page(state: RecallState, machine: Machine, *, thread_id: str = "") -> str:
    """The whole self-contained page for one finished recall (its final state) on ``machine``."""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{PAGE_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>RippleGraph recall — {esc(short(state.query, 80))}</title>"
        f"<style>{STYLE}</style></head><body>"
        + render_body(state, machine, thread_id=thread_id)
        + f"<script>{SCRIPT}</script></body></html>"
    )


def state_from(values: Mapping[str, Any]) -> RecallState:
    """A finished recall's state from checkpoint values (the recall graph's channels)."""
    return RecallState.model_validate(dict(values))
