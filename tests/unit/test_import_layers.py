"""The floors hold: the import contracts bite, and the prompts import only their data types.

``make lint`` checks the contracts over the package (``tests/package_view.py layers``); here
they are shown to fail when an edit breaks each rule, so a contract cannot pass vacuously.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import ripplegraph.prompts
from tests import package_view

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


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        # The store reaching up to a surface: a floor imports one above it.
        ("agent/store/ids.py", "from ripplegraph.agent.surfaces import client", "Floors"),
        # The settings importing what opens a deployment: services already imports them.
        ("agent/context.py", "from ripplegraph.agent.services import Services", "cycle"),
        # A node reaching the store's SQL side past MemoryStore.
        ("nodes/respond.py", "from ripplegraph.agent.store.sql import units", "Sealed store"),
    ],
)
def test_the_contracts_break_when_an_edit_breaks_a_rule(
    tmp_path: Path, module: str, line: str, broken: str
) -> None:
    view = tmp_path / "view"
    package_view.build(view)
    assert package_view.contracts(view).returncode == 0
    edited = view / "ripplegraph" / module
    edited.write_text(f"{edited.read_text()}\n{line}  # noqa\n")
    done = package_view.contracts(view)
    assert done.returncode != 0
    reported = done.stdout.partition("Broken contracts")[2]
    assert broken in reported and "BROKEN" in done.stdout, done.stdout[-2000:]


def test_the_moved_api_module_still_imports_with_a_warning() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-W",
            "always::DeprecationWarning",
            "-c",
            "from ripplegraph.agent.api import remember; print(remember.__module__)",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.stdout.strip() == "ripplegraph.agent.surfaces.api", done.stderr[-500:]
    assert "moved to ripplegraph.agent.surfaces.api" in done.stderr
