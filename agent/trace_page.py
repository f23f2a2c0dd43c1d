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

import base64
import hashlib
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any, Protocol

from ripplegraph.agent.state import Evidence, EvidenceSource, RecallState, TraceEvent, risk_label

START, END = "__start__", "__end__"
FIRST_HOP = ("semantic", "lexical", "exact", "cue")
EDGE_COLOURS = {
    "semantic": "#2f6fdb",
    "structural": "#1f9d55",
    "causal": "#d64545",
    "caused_by": "#d64545",
    "root": "#8a4fd8",
    "risk": "#e07b00",
    "query": "#b8bcc6",
}
NODE_COLOURS = {
    "question": ("#23283a", "the question"),
    "root": ("#8a4fd8", "root unit"),
    "risk": ("#e07b00", "risk statement"),
    "first_hop": ("#6d7bd8", "first-hop memory"),
    "anchor": ("#f0b400", "anchor"),
    "expanded": ("#1f9d55", "expanded memory"),
    "reached": ("#c77dba", "reached by a root or risk only"),
    "passed": ("#c3c8d6", "passed on a path, not kept"),
}
COUNTERS = ("rounds", "hops", "refinements", "llm_calls", "tokens")


class MachineEdge(Protocol):
    """An edge of a drawable LangGraph graph (``compiled.get_graph().edges``)."""

    @property
    def source(self) -> str:
        """Where it leaves."""
        ...

    @property
    def target(self) -> str:
        """Where it arrives."""
        ...

    @property
    def conditional(self) -> bool:
        """Whether a router chooses it."""
        ...


class Machine(Protocol):
    """A drawable LangGraph graph: ``compiled.get_graph()``."""

    @property
    def nodes(self) -> Mapping[str, Any]:
        """Node ids (keys) of the graph."""
        ...

    @property
    def edges(self) -> Sequence[MachineEdge]:
        """Its edges."""
        ...


STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2330;
background:#f6f7fb}
header{background:#23283a;color:#fff;padding:16px 24px}
header h1{font-size:18px;margin:0 0 6px}
header .q{font-size:20px;font-weight:600;margin:4px 0 10px}
header table{border-collapse:collapse}
header td,header th{padding:2px 10px 2px 0;text-align:left;font-weight:normal}
header th{color:#aab0c4}
main{padding:8px 24px 40px;max-width:1400px}
section{background:#fff;border:1px solid #dde1ea;border-radius:8px;margin:16px 0;padding:12px 16px}
h2{font-size:16px;margin:4px 0 10px}
.muted{color:#687089}
details.step{border-left:4px solid #c9cfe0;margin:6px 0;padding:4px 10px;background:#fafbfd}
details.step[open]{border-left-color:#5b6cff}
details.step summary{cursor:pointer;font-weight:600}
details.step .n{display:inline-block;min-width:2.2em;color:#5b6cff}
details.step .node{font-family:ui-monospace,Menlo,Consolas,monospace}
details.step ul{margin:4px 0 4px 18px;padding:0}
.kv{border-collapse:collapse;margin:4px 0}
.kv td,.kv th{padding:1px 10px 1px 0;text-align:left;vertical-align:top}
.kv th{color:#687089;font-weight:normal}
pre{background:#f1f3f8;padding:6px 8px;border-radius:4px;white-space:pre-wrap;
word-break:break-word;margin:4px 0;font-size:12px}
table.ev{border-collapse:collapse;width:100%}
table.ev th,table.ev td{border-bottom:1px solid #e6e9f0;padding:4px 6px;text-align:left;
vertical-align:top}
table.ev th{background:#f1f3f8;position:sticky;top:0}
table.ev td.num{font-variant-numeric:tabular-nums;white-space:nowrap}
table.ev tr.hl{background:#fff4c2}
.src{display:inline-block;margin:1px 4px 1px 0;padding:0 5px;border-radius:3px;font-size:12px;
background:#eef0f6}
.src.semantic{background:#dce8fb}.src.lexical{background:#ece3fb}.src.cue{background:#fbe9d8}
.src.expansion{background:#d9f3e4}.src.root{background:#eadcfb}
.src.counterfactual{background:#ffe6c7}
.edge-semantic{color:#2f6fdb}.edge-structural{color:#1f9d55}.edge-causal,.edge-caused_by{
color:#d64545}
.anchor{color:#a87900;font-weight:600}
.llm{background:#eef6ff;border:1px solid #c7dcf7;border-radius:4px;padding:4px 8px;margin:4px 0}
.llm.fallback{background:#fff1f0;border-color:#f3c2bd}
svg text{font:12px system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
svg .mnode rect{fill:#fff;stroke:#9aa3bb;stroke-width:1.5}
svg .mnode.visited rect{fill:#e8ebff;stroke:#5b6cff;stroke-width:2.5}
svg .mnode text.label{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
svg .badge{fill:#5b6cff}
svg .badge-text{fill:#fff;font-size:11px;font-weight:600}
svg .medge{stroke:#c3c8d6;stroke-width:1.5;fill:none}
svg .medge.taken{stroke:#5b6cff;stroke-width:3}
svg .medge.conditional{stroke-dasharray:5 4}
svg .step-no{fill:#5b6cff;font-size:11px;font-weight:600}
svg .mem{cursor:pointer}
svg .mem text{font-size:11.5px}
svg .mem.hl circle{stroke:#f0b400;stroke-width:4}
.legend span{display:inline-block;margin-right:14px;font-size:12px}
.legend i{display:inline-block;width:18px;height:3px;vertical-align:middle;margin-right:4px}
.legend i.semantic{background:#2f6fdb}.legend i.structural{background:#1f9d55}
.legend i.causal{background:#d64545}.legend i.root{background:#8a4fd8}
.legend i.risk{background:#e07b00}.legend i.query{background:#b8bcc6}
.scroll{overflow-x:auto}
button{font:inherit;margin-right:6px;padding:2px 10px;border:1px solid #b9c0d4;border-radius:4px;
background:#fff;cursor:pointer}
"""

SCRIPT = """
(function () {
  function mark(id) {
    document.querySelectorAll('.hl').forEach(function (e) { e.classList.remove('hl'); });
    document.querySelectorAll('[data-mid="' + id + '"]').forEach(function (e) {
      e.classList.add('hl');
    });
  }
  document.querySelectorAll('svg .mem').forEach(function (node) {
    node.addEventListener('click', function () {
      var id = node.getAttribute('data-mid');
      mark(id);
      var row = document.querySelector('tr[data-mid="' + id + '"]');
      if (row) { row.scrollIntoView({block: 'center'}); }
    });
  });
  document.querySelectorAll('tr[data-mid]').forEach(function (row) {
    row.addEventListener('click', function () { mark(row.getAttribute('data-mid')); });
  });
  function all(open) {
    document.querySelectorAll('details.step').forEach(function (d) { d.open = open; });
  }
  document.getElementById('open-all').addEventListener('click', function () { all(true); });
  document.getElementById('close-all').addEventListener('click', function () { all(false); });
})();
"""


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- the recall machine --------------------------------------------------------------------


@dataclass(frozen=True)
class Visit:
    """The machine's path: each node's step numbers and each edge's transitions."""

    steps: dict[str, list[int]]
    transitions: dict[tuple[str, str], list[int]]

    @classmethod
    def of(cls, trace: Sequence[TraceEvent]) -> Visit:
        """Visits from the trace (one event per node run), from START to END."""
        steps: dict[str, list[int]] = defaultdict(list)
        transitions: dict[tuple[str, str], list[int]] = defaultdict(list)
        previous = START
        for number, event in enumerate(trace, start=1):
            steps[event.node].append(number)
            transitions[(previous, event.node)].append(number)
            previous = event.node
        if trace:
            transitions[(previous, END)].append(len(trace) + 1)
        return cls(dict(steps), dict(transitions))


def _layers(machine: Machine) -> tuple[dict[str, int], set[tuple[str, str]]]:
    """Each node's layer (longest forward path from START) and the back edges (loops)."""
    children: dict[str, list[str]] = defaultdict(list)
    for edge in machine.edges:
        children[edge.source].append(edge.target)
    back: set[tuple[str, str]] = set()
    state: dict[str, int] = {}  # 1 = on the DFS stack, 2 = done
    order: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        for child in children[node]:
            if state.get(child) == 1:
                back.add((node, child))
            elif child not in state:
                visit(child)
        state[node] = 2
        order.append(node)

    for node in [START, *machine.nodes]:
        if node not in state:
            visit(node)
    layer = dict.fromkeys(machine.nodes, 0)
    for node in reversed(order):
        for child in children[node]:
            if (node, child) not in back:
                layer[child] = max(layer.get(child, 0), layer.get(node, 0) + 1)
    if END in layer:  # the end below everything, however short the path to it
        layer[END] = max(layer.values()) + 1
    return layer, back


def machine_svg(machine: Machine, visit: Visit) -> str:
    """The recall graph, the path taken highlighted and every visit numbered."""
    layer, back = _layers(machine)
    rows: dict[int, list[str]] = defaultdict(list)
    for node in machine.nodes:
        rows[layer[node]].append(node)
    width_box, height_box, gap_x, gap_y, margin = 200, 34, 40, 34, 20
    widest = max(len(nodes) for nodes in rows.values())
    width = margin * 2 + widest * width_box + (widest - 1) * gap_x + 120
    height = margin * 2 + len(rows) * height_box + (len(rows) - 1) * gap_y
    position: dict[str, tuple[float, float]] = {}
    for row, nodes in rows.items():
        span = len(nodes) * width_box + (len(nodes) - 1) * gap_x
        left = (width - 120 - span) / 2
        for index, node in enumerate(nodes):
            x = left + index * (width_box + gap_x)
            position[node] = (x, margin + row * (height_box + gap_y))
    parts = [
        f'<svg id="machine" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
        'aria-label="recall state machine">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0 0L10 5L0 10z" '
        'fill="#8a93ad"/></marker><marker id="arrow-taken" viewBox="0 0 10 10" refX="9" '
        'refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse">'
        '<path d="M0 0L10 5L0 10z" fill="#5b6cff"/></marker></defs>',
    ]
    for edge in machine.edges:
        sx, sy = position[edge.source]
        tx, ty = position[edge.target]
        taken = visit.transitions.get((edge.source, edge.target), [])
        if (edge.source, edge.target) in back:
            x1, y1 = sx + width_box, sy + height_box / 2
            x2, y2 = tx + width_box, ty + height_box / 2
            bend = max(x1, x2) + 60
            d = f"M{x1:.0f} {y1:.0f} C{bend:.0f} {y1:.0f} {bend:.0f} {y2:.0f} {x2:.0f} {y2:.0f}"
            label_x, label_y = bend - 12, (y1 + y2) / 2
        else:
            x1, y1 = sx + width_box / 2, sy + height_box
            x2, y2 = tx + width_box / 2, ty
            mid = (y1 + y2) / 2
            d = f"M{x1:.0f} {y1:.0f} C{x1:.0f} {mid:.0f} {x2:.0f} {mid:.0f} {x2:.0f} {y2:.0f}"
            label_x, label_y = (x1 + x2) / 2 + 6, mid + 4
        classes = (
            "medge" + (" taken" if taken else "") + (" conditional" if edge.conditional else "")
        )
        marker = "arrow-taken" if taken else "arrow"
        parts.append(f'<path class="{classes}" d="{d}" marker-end="url(#{marker})"/>')
        if taken:
            numbers = ", ".join(str(n) for n in taken)
            parts.append(
                f'<text class="step-no" x="{label_x:.0f}" y="{label_y:.0f}">{_e(numbers)}</text>'
            )
    for node in machine.nodes:
        x, y = position[node]
        steps = visit.steps.get(node, [])
        visited = bool(steps) or (node == START) or (node == END and bool(visit.transitions))
        title = node if not steps else f"{node}: step(s) {', '.join(map(str, steps))}"
        parts.append(
            f'<g class="mnode{" visited" if visited else ""}" data-node="{_e(node)}">'
            f"<title>{_e(title)}</title>"
            f'<rect x="{x:.0f}" y="{y:.0f}" width="{width_box}" height="{height_box}" rx="17"/>'
            f'<text class="label" x="{x + width_box / 2:.0f}" y="{y + 21:.0f}" '
            f'text-anchor="middle">{_e(node)}</text>'
        )
        for index, number in enumerate(steps):
            cx, cy = x + width_box + 4 + index * 22, y + 2
            parts.append(
                f'<circle class="badge" cx="{cx:.0f}" cy="{cy:.0f}" r="10"/>'
                f'<text class="badge-text" x="{cx:.0f}" y="{cy + 4:.0f}" '
                f'text-anchor="middle">{number}</text>'
            )
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


# --- steps ---------------------------------------------------------------------------------


def _budget_cells(spent: Mapping[str, int] | None, limits: Mapping[str, int]) -> str:
    if not spent:
        return '<span class="muted">not recorded</span>'
    cells = []
    for name in COUNTERS:
        limit = limits.get(name)
        cells.append(
            f"<td>{_e(name)} {spent.get(name, 0)}" + (f" / {limit}" if limit is not None else "")
        )
    return '<table class="kv"><tr>' + "</td>".join(cells) + "</td></tr></table>"


def _llm_block(call: Mapping[str, Any]) -> str:
    fallback = bool(call.get("fallback"))
    note = str(call.get("note") or "")
    return (
        f'<div class="llm{" fallback" if fallback else ""}">LLM call · role '
        f"<b>{_e(call.get('role', '?'))}</b> · {_e(call.get('calls', 0))} call(s) · "
        f"{_e(call.get('tokens', 0))} tokens"
        + (" · <b>fell back to the offline policy</b>" if fallback else "")
        + (f" · {_e(note)}" if note else "")
        + "</div>"
    )


def steps_html(state: RecallState, limits: Mapping[str, int]) -> str:
    """Each trace event as an expandable step: decision, reason, additions, budget after."""
    out = []
    for number, event in enumerate(state.trace, start=1):
        details = dict(event.details)
        llm = details.pop("llm", None)
        added = "".join(
            f"<li><code>{_e(mid)}</code> "
            + (_e(state.pool[mid].memory.text) if mid in state.pool else "")
            + "</li>"
            for mid in event.added
        )
        extra = (
            "".join(
                f"<tr><th>{_e(key)}</th><td><pre>{_e(_json(value))}</pre></td></tr>"
                for key, value in details.items()
            )
            if details
            else ""
        )
        out.append(
            f'<details class="step" id="step-{number}" data-node="{_e(event.node)}">'
            f'<summary><span class="n">#{number}</span><span class="node">{_e(event.node)}'
            f"</span> — {_e(event.decision)}</summary>"
            f'<table class="kv"><tr><th>reason</th><td>{_e(event.reason)}</td></tr>'
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
            f'<span class="edge-{_e(kind)}"> —{_e(kind)}→ </span>' + _node_label(node, texts)
        )
    return "".join(out)


def _node_label(node: str, texts: Mapping[str, str]) -> str:
    if node in texts:
        return f'<span title="{_e(texts[node])}"><code>{_e(node[:10])}…</code></span>'
    return f"<code>{_e(node)}</code>"


def _source_html(source: EvidenceSource, memory_id: str, texts: Mapping[str, str]) -> str:
    label = f"{source.channel} #{source.rank} ({source.score:.2f})"
    if source.round:
        label += f" round {source.round}"
    walk = _walk(source, memory_id, texts)
    return f'<span class="src {_e(source.channel)}">{_e(label)}</span>' + (
        f"<div>{walk}</div>" if walk else ""
    )


def evidence_html(evidence: Sequence[Evidence], texts: Mapping[str, str]) -> str:
    """The assembled evidence with ρ and its terms, sources and walked paths."""
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
        rows.append(
            f'<tr id="ev-{rank}" data-mid="{_e(memory.id)}"><td class="num">{rank}</td>'
            f'<td class="num"><b>{item.score:.3f}</b></td><td class="num">{cell("alignment")}'
            f'</td><td class="num">{cell("query")}</td><td class="num">{cell("path")}</td>'
            f'<td class="num">{cell("anchor")}</td><td class="num">{cell("standing")}</td>'
            f"<td>{_e(memory.text)}"
            + (' <span class="anchor">⚓ anchor</span>' if item.anchor else "")
            + (' <span class="anchor">standing fact</span>' if item.standing else "")
            + f'<div class="muted">{_e(memory.provenance.session_id)} · {when} · '
            f"<code>{_e(memory.id)}</code></div></td><td>{sources}</td></tr>"
        )
    return (
        '<table class="ev"><thead><tr><th>#</th><th>ρ</th><th>a(q,m)</th><th>λq·a</th>'
        "<th>λp·π</th><th>λa·anchor</th><th>λs·standing</th><th>memory</th><th>reached by</th>"
        "</tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
    )


# --- the memory neighbourhood ------------------------------------------------------------


@dataclass
class _Node:
    key: str
    label: str
    title: str
    column: int
    kind: str  # question, root, risk, first_hop, anchor, expanded, reached, passed
    rank: int = 0


def _memory_nodes(state: RecallState) -> tuple[dict[str, _Node], list[tuple[str, str, str]]]:
    """Nodes and typed links of the neighbourhood: what reached each shown memory, and how."""
    shown = {item.memory.id: item for item in state.evidence}
    anchors = set(state.plan.anchors if state.plan else []) | {
        mid for mid, item in state.pool.items() if item.anchor
    }
    for mid in anchors:
        if mid in state.pool and mid not in shown:
            shown[mid] = state.pool[mid]
    rank_of = {item.memory.id: rank for rank, item in enumerate(state.evidence, start=1)}
    nodes: dict[str, _Node] = {
        "question": _Node("question", "question", state.query, 0, "question")
    }
    links: list[tuple[str, str, str]] = []
    for root in state.roots:
        nodes[root.id] = _Node(
            root.id, _short(f"root: {root.person} / {root.topic}", 34), root.rule, 1, "root"
        )
        links.append(("question", root.id, "root"))
    for index, statement in enumerate(state.counterfactuals):
        key = risk_label(index)
        nodes[key] = _Node(key, _short(f"{key}: {statement}", 34), statement, 1, "risk")
        links.append(("question", key, "risk"))
    for mid, item in shown.items():
        channels = {s.channel for s in item.sources}
        expansion = [s for s in item.sources if s.channel == "expansion"]
        depth = min((len(s.edges) for s in expansion), default=0)
        kind = (
            "anchor"
            if mid in anchors
            else "first_hop"
            if channels & set(FIRST_HOP)
            else "expanded"
            if expansion
            else "reached"
        )
        column = 2 if kind != "expanded" else 2 + depth
        text = item.memory.text
        rank = rank_of.get(mid, 0)
        nodes[mid] = _Node(
            mid, _short(f"#{rank} {text}" if rank else text, 40), text, column, kind, rank
        )
        if channels & set(FIRST_HOP):
            links.append(("question", mid, "query"))
        for source in item.sources:
            links += walk_steps(source, mid)
    for a, b, _ in list(links):
        for key in (a, b):
            if key not in nodes:
                memory = state.pool.get(key)
                text = memory.memory.text if memory else f"{key} (not kept in the pool)"
                nodes[key] = _Node(key, _short(text, 40), text, 3, "passed")
    return nodes, list(dict.fromkeys(links))


def neighbourhood_svg(state: RecallState) -> str:
    """First-hop hits, anchors, expanded memories, roots and risks, with typed links."""
    nodes, links = _memory_nodes(state)
    columns: dict[int, list[_Node]] = defaultdict(list)
    for node in nodes.values():
        columns[node.column].append(node)
    for members in columns.values():
        members.sort(key=lambda n: (n.rank == 0, n.rank, n.key))
    x_of = {0: 20, 1: 130, 2: 400, 3: 720, 4: 1040}
    row_height, top = 24, 30
    position: dict[str, tuple[float, float]] = {}
    for column, members in columns.items():
        for index, node in enumerate(members):
            position[node.key] = (x_of.get(column, 1040), top + index * row_height)
    tallest = max((len(m) for m in columns.values()), default=1)
    width, height = 1360, top + tallest * row_height + 10
    headings = {0: "", 1: "roots · risks", 2: "first hop · anchors", 3: "hop 1", 4: "hop 2"}
    parts = [
        f'<svg id="neighbourhood" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        'aria-label="memory neighbourhood">'
    ]
    for column, heading in headings.items():
        if heading and column in columns:
            parts.append(
                f'<text x="{x_of[column]}" y="14" fill="#687089" font-weight="600">'
                f"{_e(heading)}</text>"
            )
    for a, b, kind in links:
        if a not in position or b not in position:
            continue
        (x1, y1), (x2, y2) = position[a], position[b]
        colour = EDGE_COLOURS.get(kind, "#999")
        dashed = ' stroke-dasharray="4 3"' if kind in ("root", "risk", "query") else ""
        width_line = 1 if kind == "query" else 2
        opacity = 0.35 if kind == "query" else 0.85
        if abs(x1 - x2) < 1:  # same column: bow out to the left
            bend = x1 - 40
            d = f"M{x1:.0f} {y1:.0f} C{bend:.0f} {y1:.0f} {bend:.0f} {y2:.0f} {x2:.0f} {y2:.0f}"
        else:
            mid = (x1 + x2) / 2
            d = f"M{x1:.0f} {y1:.0f} C{mid:.0f} {y1:.0f} {mid:.0f} {y2:.0f} {x2:.0f} {y2:.0f}"
        parts.append(
            f'<path d="{d}" fill="none" stroke="{colour}" stroke-width="{width_line}"'
            f'{dashed} opacity="{opacity}"><title>{_e(kind)}</title></path>'
        )
    for node in nodes.values():
        x, y = position[node.key]
        memory = node.kind not in ("question", "root", "risk")
        parts.append(
            f'<g class="{"mem" if memory else "hub"}"'
            + (f' data-mid="{_e(node.key)}"' if memory else "")
            + f"><title>{_e(node.title)}</title>"
            f'<circle cx="{x:.0f}" cy="{y:.0f}" r="7" fill="{NODE_COLOURS[node.kind][0]}" '
            'stroke="#fff" stroke-width="1.5"/>'
            f'<text x="{x + 11:.0f}" y="{y + 4:.0f}">{_e(node.label)}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


# --- roots and risks -----------------------------------------------------------------------


def roots_and_risks_html(state: RecallState, texts: Mapping[str, str]) -> str:
    """Activated root units with their evidence, and each risk with what it retrieved."""
    out = []
    if state.roots:
        out.append("<h3>Root units activated</h3><ul>")
        for root in state.roots:
            evidence = "".join(f"<li>{_e(texts.get(mid, mid))}</li>" for mid in root.evidence_ids)
            out.append(
                f"<li><b>{_e(root.person)} / {_e(root.topic)}</b> "
                f"<code>{_e(root.id)}</code><div>{_e(root.rule)}</div><ul>{evidence}</ul></li>"
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
                f"<li>{_e(texts.get(mid, mid))}</li>"
                for mid in dict.fromkeys(retrieved.get(risk_label(index), []))
            )
            out.append(
                f"<li>{_e(statement)}"
                + (
                    f"<ul>{found}</ul>"
                    if found
                    else '<div class="muted">retrieved nothing new</div>'
                )
                + "</li>"
            )
        out.append("</ol>")
    return "".join(out) or '<p class="muted">No root unit applied and no risk was sought.</p>'


# --- the page ------------------------------------------------------------------------------


def _header(state: RecallState, thread_id: str) -> str:
    used, limits = state.budget, state.budget.limits
    spent = used.model_dump()
    cells = "".join(
        f"<tr><th>{_e(name)}</th><td>{spent.get(name, 0)}"
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
    rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in facts)
    return (
        "<header><h1>RippleGraph recall</h1>"
        f'<div class="q">{_e(state.query)}</div>'
        f"<table><tr><td><table>{rows}</table></td><td><table>{cells}</table></td></tr>"
        "</table></header>"
    )


def _texts(state: RecallState) -> dict[str, str]:
    texts = {mid: item.memory.text for mid, item in state.pool.items()}
    texts.update({item.memory.id: item.memory.text for item in state.evidence})
    return texts


PAGE_CSP = (
    f"default-src 'none'; style-src {_csp_hash(STYLE)}; script-src {_csp_hash(SCRIPT)}; "
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
            ("causal", "causal edge"),
            ("root", "root unit → its evidence"),
            ("risk", "risk → what it retrieved"),
        )
    ) + "".join(
        f'<span><svg width="12" height="12" viewBox="0 0 12 12"><circle cx="6" cy="6" r="5" '
        f'fill="{colour}"/></svg> {_e(label)}</span>'
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
        f"<title>RippleGraph recall — {_e(_short(state.query, 80))}</title>"
        f"<style>{STYLE}</style></head><body>"
        + render_body(state, machine, thread_id=thread_id)
        + f"<script>{SCRIPT}</script></body></html>"
    )


def state_from(values: Mapping[str, Any]) -> RecallState:
    """A finished recall's state from checkpoint values (the recall graph's channels)."""
    return RecallState.model_validate(dict(values))
