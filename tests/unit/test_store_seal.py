"""The store is sealed: outside ``agent/store/``, no code reaches its SQL side."""

from __future__ import annotations

import ast
from pathlib import Path

import ripplegraph

ROOT = Path(
    ripplegraph.__file__
).parent  # the package: the repository's folders, or mutmut's copies
PACKAGES = ("agent", "nodes", "prompts", "studio")


def outside_the_store() -> list[Path]:
    files = [path for package in PACKAGES for path in (ROOT / package).rglob("*.py")]
    return [path for path in files if (ROOT / "agent" / "store") not in path.parents]


def test_only_the_store_touches_its_relational_side() -> None:
    reached: list[str] = []
    for path in outside_the_store():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            attribute = isinstance(node, ast.Attribute) and node.attr == "relational"
            module = node.module if isinstance(node, ast.ImportFrom) else None
            sql = (module or "").startswith(
                ("ripplegraph.agent.store.sqlite", "ripplegraph.agent.store.backend")
            )
            if attribute or sql:
                reached.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}")
    assert len(outside_the_store()) > 40, "the packages were found"
    assert reached == [], "use MemoryStore's operations instead"
