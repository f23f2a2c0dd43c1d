"""The recall machine as drawn on the trace page: its nodes in layers, the run's path shaded."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ripplegraph.agent.state import TraceEvent
from ripplegraph.agent.surfaces.trace_page.markup import esc

START, END = "__start__", "__end__"


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
                f'<text class="step-no" x="{label_x:.0f}" y="{label_y:.0f}">{esc(numbers)}</text>'
            )
    for node in machine.nodes:
        x, y = position[node]
        steps = visit.steps.get(node, [])
        visited = bool(steps) or (node == START) or (node == END and bool(visit.transitions))
        title = node if not steps else f"{node}: step(s) {', '.join(map(str, steps))}"
        parts.append(
            f'<g class="mnode{" visited" if visited else ""}" data-node="{esc(node)}">'
            f"<title>{esc(title)}</title>"
            f'<rect x="{x:.0f}" y="{y:.0f}" width="{width_box}" height="{height_box}" rx="17"/>'
            f'<text class="label" x="{x + width_box / 2:.0f}" y="{y + 21:.0f}" '
            f'text-anchor="middle">{esc(node)}</text>'
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
