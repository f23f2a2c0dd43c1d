"""The store is sealed: outside ``agent/store/``, no code reaches its SQL side."""

from __future__ import annotations

import ast
from importlib import import_module
from pathlib import Path

# Each package where it is imported from: the repository's folders, or mutmut's copies.
FOLDERS = [
    Path(str(import_module(f"ripplegraph.{name}").__file__)).parent
    for name in ("agent", "nodes", "prompts", "studio")
]
STORE = FOLDERS[0] / "store"


def outside_the_store() -> list[Path]:
    files = [path for folder in FOLDERS for path in folder.rglob("*.py")]
    return [path for path in files if STORE not in path.parents]


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
                reached.append(f"{path}:{getattr(node, 'lineno', 0)}")
    assert len(outside_the_store()) > 40, "the packages were found"
    assert reached == [], "use MemoryStore's operations instead"
