"""The prompts sit under the call path: they import none of it, and each imports first."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import ripplegraph.prompts

ROOT = Path(__file__).resolve().parents[2]
PROMPTS = sorted(
    p for p in Path(ripplegraph.prompts.__file__).parent.glob("*.py") if p.name != "__init__.py"
)
ALLOWED = {"ripplegraph.agent.memory", "ripplegraph.agent.state"}  # the data the prompts render


def imported(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
        alias.name for n in ast.walk(tree) if isinstance(n, ast.Import) for alias in n.names
    }


def test_prompts_import_their_data_types_and_each_other_only() -> None:
    reached = {
        f"{path.name}: {module}"
        for path in PROMPTS
        for module in imported(path)
        if module.split(".")[:2]
        in (["ripplegraph", "agent"], ["ripplegraph", "nodes"], ["ripplegraph", "studio"])
        and module not in ALLOWED
    }
    assert len(PROMPTS) > 8
    assert reached == set()


@pytest.mark.parametrize(
    "module", ["ripplegraph.agent.memory", *[f"ripplegraph.prompts.{p.stem}" for p in PROMPTS]]
)
def test_imports_first_in_a_fresh_interpreter(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", f"import {module}"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-500:]
