"""One import name, ``ripplegraph``, from the wheel and from an editable install alike.

``langgraph new`` scaffolds a package named ``agent``: installing RippleGraph into such an app
must not shadow it.  The build backend maps ``ripplegraph.agent`` and its siblings onto the
top-level folders (no links in the tree), so the wheel holds them under ``ripplegraph/`` and
an editable install imports the real files.  Each is installed, without dependencies, into a
fresh virtual environment that borrows the development environment's installed dependencies
through a path entry (which does not activate the development install of RippleGraph itself).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import ripplegraph

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
APP = """
import agent
import ripplegraph
from ripplegraph import Memory

import ripplegraph.agent.graph

assert agent.NAME == "the app's own agent", agent.__file__
assert ripplegraph.__file__.startswith({home!r}), ripplegraph.__file__
assert ripplegraph.agent.graph.__file__.startswith({graph!r}), ripplegraph.agent.graph.__file__
memory = Memory({store!r})
memory.add("I'm allergic to shellfish.", user_id="maya")
found = memory.search("Shall I book the oyster bar for Maya?", user_id="maya")
assert "allergic to shellfish" in found.context, found.context
print(ripplegraph.__version__, agent.NAME)
"""


def run(*command: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "PIP_NO_INDEX": "1", **(env or {})},
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Please be careful" not in done.stderr, done.stderr[-2000:]
    return done.stdout


def make_install_env() -> dict[str, str]:
    """The environment ``make install`` gives pip (the Makefile's ``QUIET_EDITABLE_NOTE``)."""
    line = next(
        line
        for line in (ROOT / "Makefile").read_text().splitlines()
        if line.startswith("QUIET_EDITABLE_NOTE :=")
    )
    name, _, value = line.partition(":=")[2].strip().partition("=")
    return {name: value.strip('"')}


def installed(tmp_path: Path, *target: str | Path) -> tuple[Path, Path]:
    """A fresh virtual environment with ``target`` installed; its python and site folder."""
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv)
    python = venv / "bin" / "python"
    site = Path(
        run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip()
    )
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # An editable install builds here: with the development environment's setuptools, not
    # the older one a new environment may bring.
    run(python, "-m", "pip", "uninstall", "--yes", "--quiet", "setuptools")
    # As make install runs it: setuptools' boxed note on editable installs is not printed.
    run(
        python,
        *("-m", "pip", "install", "--no-deps", "--no-build-isolation", "--quiet", *target),
        env=make_install_env(),
    )
    return python, site


def runs_beside_an_agent_package(tmp_path: Path, python: Path, home: Path, graph: Path) -> None:
    """The app's own ``agent`` package and RippleGraph, from where they should be, both work."""
    app = tmp_path / "app"
    (app / "agent").mkdir(parents=True)
    (app / "agent" / "__init__.py").write_text('NAME = "the app\'s own agent"\n')
    script = APP.format(home=str(home), graph=str(graph), store=str(tmp_path / "store"))
    out = run(python, "-c", script, cwd=app)
    assert out.split() == [ripplegraph.__version__, "the", "app's", "own", "agent"]
    assert run(python.parent / "ripplegraph", "--version").strip() == (
        f"ripplegraph {ripplegraph.__version__}"
    )


def test_the_wheel_installs_only_ripplegraph_and_runs_beside_an_agent_package(
    tmp_path: Path,
) -> None:
    dist = tmp_path / "dist"
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", dist, ROOT)
    (wheel,) = dist.glob("ripplegraph-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.split("/")[0] for name in names} == {
        "ripplegraph",
        f"ripplegraph-{ripplegraph.__version__}.dist-info",
    }
    inside = [
        "py.typed",
        "agent/graph.py",
        "agent/cli/app.py",
        "nodes/respond.py",
        "prompts/role.py",
        "agent/surfaces/ui/static/ui.css",
        "studio/demo_history.json",
    ]
    assert {f"ripplegraph/{name}" for name in inside} <= set(names)
    python, site = installed(tmp_path, wheel)
    runs_beside_an_agent_package(tmp_path, python, site, site / "ripplegraph" / "agent")


def test_an_editable_install_imports_the_real_files_from_a_tree_without_links(
    tmp_path: Path,
) -> None:
    tracked = run("git", "ls-files", "-s", cwd=ROOT).splitlines()
    assert not [line for line in tracked if line.startswith("120000")], "a symbolic link"
    python, _ = installed(tmp_path, "-e", ROOT)
    runs_beside_an_agent_package(tmp_path, python, ROOT / "ripplegraph", ROOT / "agent")
