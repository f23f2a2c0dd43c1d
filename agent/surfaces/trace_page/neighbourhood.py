"""The memory neighbourhood, drawn as one SVG.

The question, the roots, risks and memories the run reached, and the typed links between them.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ripplegraph.agent.state import RecallState, risk_label
from ripplegraph.agent.surfaces.trace_page.markup import esc, short
from ripplegraph.agent.surfaces.trace_page.sections import walk_steps

FIRST_HOP = ("semantic", "lexical", "exact", "cue")
EDGE_COLOURS = {
    "semantic": "#2f6fdb",
    "structural": "#1f9d55",
    "dialogue": "#0e8f9a",
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
            root.id, short(f"root: {root.person} / {root.topic}", 34), root.rule, 1, "root"
        )
        links.append(("question", root.id, "root"))
    for index, statement in enumerate(state.counterfactuals):
        key = risk_label(index)
        nodes[key] = _Node(key, short(f"{key}: {statement}", 34), statement, 1, "risk")
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
            mid, short(f"#{rank} {text}" if rank else text, 40), text, column, kind, rank
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
                nodes[key] = _Node(key, short(text, 40), text, 3, "passed")
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
                f"{esc(heading)}</text>"
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
            f'{dashed} opacity="{opacity}"><title>{esc(kind)}</title></path>'
        )
    for node in nodes.values():
        x, y = position[node.key]
        memory = node.kind not in ("question", "root", "risk")
        parts.append(
            f'<g class="{"mem" if memory else "hub"}"'
            + (f' data-mid="{esc(node.key)}"' if memory else "")
            + f"><title>{esc(node.title)}</title>"
            f'<circle cx="{x:.0f}" cy="{y:.0f}" r="7" fill="{NODE_COLOURS[node.kind][0]}" '
            'stroke="#fff" stroke-width="1.5"/>'
            f'<text x="{x + 11:.0f}" y="{y + 4:.0f}">{esc(node.label)}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)
