"""The trace page's tables.

Each step with its budget and model calls, the evidence as assembled with the walks that
reached it, and the roots and risks applied.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from ripplegraph.agent.decisions.policies.ranking import LEARNED
from ripplegraph.agent.state import Evidence, EvidenceSource, RecallState, risk_label
from ripplegraph.agent.surfaces.trace_page.markup import esc

COUNTERS = ("rounds", "hops", "refinements", "llm_calls", "tokens")


# --- steps ---------------------------------------------------------------------------------


def _budget_cells(spent: Mapping[str, int] | None, limits: Mapping[str, int]) -> str:
    if not spent:
        return '<span class="muted">not recorded</span>'
    cells = []
    for name in COUNTERS:
        limit = limits.get(name)
        cells.append(
            f"<td>{esc(name)} {spent.get(name, 0)}" + (f" / {limit}" if limit is not None else "")
        )
    return '<table class="kv"><tr>' + "</td>".join(cells) + "</td></tr></table>"


def _llm_block(call: Mapping[str, Any]) -> str:
    fallback = bool(call.get("fallback"))
    note = str(call.get("note") or "")
    return (
        f'<div class="llm{" fallback" if fallback else ""}">LLM call · role '
        f"<b>{esc(call.get('role', '?'))}</b> · {esc(call.get('calls', 0))} call(s) · "
        f"{esc(call.get('tokens', 0))} tokens"
        + (" · <b>fell back to the offline policy</b>" if fallback else "")
        + (f" · {esc(note)}" if note else "")
        + "</div>"
    )


def steps_html(state: RecallState, limits: Mapping[str, int]) -> str:
    """Each trace event as an expandable step: decision, reason, additions, budget after."""
    out = []
    for number, event in enumerate(state.trace, start=1):
        details = dict(event.details)
        llm = details.pop("llm", None)
        added = "".join(
            f"<li><code>{esc(mid)}</code> "
            + (esc(state.pool[mid].memory.text) if mid in state.pool else "")
            + "</li>"
            for mid in event.added
        )
        extra = (
            "".join(
                f"<tr><th>{esc(key)}</th><td><pre>{esc(_json(value))}</pre></td></tr>"
                for key, value in details.items()
            )
            if details
            else ""
        )
        out.append(
            f'<details class="step" id="step-{number}" data-node="{esc(event.node)}">'
            f'<summary><span class="n">#{number}</span><span class="node">{esc(event.node)}'
            f"</span> — {esc(event.decision)}</summary>"
            f'<table class="kv"><tr><th>reason</th><td>{esc(event.reason)}</td></tr>'
            f"<tr><th>budget after</th><td>{_budget_cells(event.budget, limits)}</td></tr>"
            + extra
            + "</table>"
            + (_llm_block(llm) if isinstance(llm, Mapping) else "")
            + (
                f"<div>added {len(event.added)}:</div><ul>{added}</ul>"
                if event.added
                else '<div class="muted">added nothing to the pool</div>'
            )
            + "</details>"
        )
    return "".join(out) or '<p class="muted">No steps were recorded.</p>'


def _json(value: Any) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, default=str)


# --- evidence ------------------------------------------------------------------------------


def walk_steps(source: EvidenceSource, memory_id: str) -> list[tuple[str, str, str]]:
    """A source's walk as (from, to, kind) steps ending at the memory.

    ``edges`` types the last steps (memory-graph edges); a step before them is the search
    that started the walk: from a root unit to its evidence, or from a risk to what it found.
    """
    nodes = list(source.path)
    if not nodes or nodes[-1] != memory_id:
        nodes.append(memory_id)
    count = len(nodes) - 1
    lead = {"root": "root", "counterfactual": "risk"}.get(source.channel, "")
    kinds = ([lead] * count + list(source.edges))[-count:] if count else []
    return list(zip(nodes[:-1], nodes[1:], kinds, strict=True))


def _walk(source: EvidenceSource, memory_id: str, texts: Mapping[str, str]) -> str:
    """A source's walk as "start —type→ … → memory", edge types coloured."""
    steps = walk_steps(source, memory_id)
    if not steps:
        return ""
    out = [_node_label(steps[0][0], texts)]
    for _, node, kind in steps:
        out.append(
            f'<span class="edge-{esc(kind)}"> —{esc(kind)}→ </span>' + _node_label(node, texts)
        )
    return "".join(out)


def _node_label(node: str, texts: Mapping[str, str]) -> str:
    if node in texts:
        return f'<span title="{esc(texts[node])}"><code>{esc(node[:10])}…</code></span>'
    return f"<code>{esc(node)}</code>"


def _source_html(source: EvidenceSource, memory_id: str, texts: Mapping[str, str]) -> str:
    label = f"{source.channel} #{source.rank} ({source.score:.2f})"
    if source.round:
        label += f" round {source.round}"
    walk = _walk(source, memory_id, texts)
    return f'<span class="src {esc(source.channel)}">{esc(label)}</span>' + (
        f"<div>{walk}</div>" if walk else ""
    )


def evidence_html(evidence: Sequence[Evidence], texts: Mapping[str, str]) -> str:
    """The assembled evidence with its score and why: ρ's terms or the learned ranker's features.

    The score is ρ under a hand-ranked recipe, else the learned ranker's, whose strongest
    feature contributions (``learned:<feature>`` parts) say why a memory ranks where it does.
    """
    if not evidence:
        return '<p class="muted">No memory supports this question.</p>'
    rows = []
    for rank, item in enumerate(evidence, start=1):
        parts = item.score_parts
        memory = item.memory
        when = (
            f"{memory.provenance.session_time:%Y-%m-%d}" if memory.provenance.session_time else "?"
        )

        def cell(name: str, parts: Mapping[str, float] = parts) -> str:
            return f"{parts[name]:.3f}" if name in parts else "–"

        sources = "".join(_source_html(s, memory.id, texts) for s in item.sources)
        why = "<br>".join(
            f"{esc(name.removeprefix(LEARNED))} {value:+.2f}"
            for name, value in parts.items()
            if name.startswith(LEARNED)
        )
        rows.append(
            f'<tr id="ev-{rank}" data-mid="{esc(memory.id)}"><td class="num">{rank}</td>'
            f'<td class="num"><b>{item.score:.3f}</b></td><td class="num">{cell("alignment")}'
            f'</td><td class="num">{cell("query")}</td><td class="num">{cell("path")}</td>'
            f'<td class="num">{cell("anchor")}</td><td class="num">{cell("standing")}</td>'
            f'<td class="why">{why or "–"}</td>'
            f"<td>{esc(memory.text)}"
            + (' <span class="anchor">⚓ anchor</span>' if item.anchor else "")
            + (' <span class="anchor">standing fact</span>' if item.standing else "")
            + f'<div class="muted">{esc(memory.provenance.session_id)} · {when} · '
            f"<code>{esc(memory.id)}</code></div></td><td>{sources}</td></tr>"
        )
    return (
        '<table class="ev"><thead><tr><th>#</th><th>score</th><th>a(q,m)</th><th>λq·a</th>'
        "<th>λp·π</th><th>λa·anchor</th><th>λs·standing</th>"
        '<th title="the learned ranker\'s strongest feature contributions">learned: why</th>'
        "<th>memory</th>"
        "<th>reached by</th>"
        "</tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
    )


# --- roots and risks -----------------------------------------------------------------------


def roots_and_risks_html(state: RecallState, texts: Mapping[str, str]) -> str:
    """Activated root units with their evidence, and each risk with what it retrieved."""
    out = []
    if state.roots:
        out.append("<h3>Root units activated</h3><ul>")
        for root in state.roots:
            evidence = "".join(f"<li>{esc(texts.get(mid, mid))}</li>" for mid in root.evidence_ids)
            out.append(
                f"<li><b>{esc(root.person)} / {esc(root.topic)}</b> "
                f"<code>{esc(root.id)}</code><div>{esc(root.rule)}</div><ul>{evidence}</ul></li>"
            )
        out.append("</ul>")
    if state.counterfactuals:
        retrieved: dict[str, list[str]] = defaultdict(list)
        for mid, item in state.pool.items():
            for source in item.sources:
                if source.channel == "counterfactual" and source.path:
                    retrieved[source.path[0]].append(mid)
        out.append("<h3>Counterfactual risks</h3><ol>")
        for index, statement in enumerate(state.counterfactuals):
            found = "".join(
                f"<li>{esc(texts.get(mid, mid))}</li>"
                for mid in dict.fromkeys(retrieved.get(risk_label(index), []))
            )
            out.append(
                f"<li>{esc(statement)}"
                + (
                    f"<ul>{found}</ul>"
                    if found
                    else '<div class="muted">retrieved nothing new</div>'
                )
                + "</li>"
            )
        out.append("</ol>")
    return "".join(out) or '<p class="muted">No root unit applied and no risk was sought.</p>'
