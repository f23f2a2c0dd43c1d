"""The package as it installs, for tools that find modules by folder name (mypy, mutmut…).

The build backend maps ``ripplegraph.agent`` onto ``agent/`` (and ``nodes``, ``prompts``,
``studio`` likewise: ``[tool.setuptools.package-dir]``), which Python's import system follows
through the editable install and the wheel, but which mypy and mutmut do not: they name a
module by the folders it sits in.  ``build`` copies each mapped folder to its import path under
``build/view/`` (only the files that changed, their times kept, so mypy's cache stays warm;
files gone from the source are removed), and ``typecheck`` runs mypy there and reports each
error at the real file.  ``checkout`` builds ``build/mutation/``: the view with every other
file git tracks beside it (tests, pyproject.toml, the docs), where ``make mutate`` runs
mutmut, whose mutants are then named as the package imports them.

``layers`` checks the import contracts there with import-linter, which finds modules by
folder too.

Usage: ``python -m tests.package_view typecheck`` and ``python -m tests.package_view layers``
(``make lint``), or ``python -m tests.package_view checkout`` (``make mutate``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VIEW = ROOT / "build" / "view"
CHECKOUT = ROOT / "build" / "mutation"
_SKIPPED = {"__pycache__", ".mypy_cache"}


def roots() -> dict[str, Path]:
    """Each import path the package-dir mapping names, with the folder it maps onto."""
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapped = {"ripplegraph": "ripplegraph", **settings["package-dir"]}
    return {name.replace(".", "/"): ROOT / folder for name, folder in mapped.items()}


def build(view: Path = VIEW, *, everything: bool = False) -> dict[Path, Path]:
    """Bring the view up to date; returns each view file with the real file it copies.

    With ``everything``, every file git tracks outside the mapped folders is copied too, at
    its own path.
    """
    copies: dict[Path, Path] = {}
    if everything:
        tracked = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout.decode()
        mapped = {folder for folder in roots().values()}
        for name in filter(None, tracked.split("\0")):
            source = ROOT / name
            if source.is_file() and not any(source.is_relative_to(m) for m in mapped):
                copies[view / name] = source
    for path, folder in roots().items():
        for source in folder.rglob("*"):
            relative = source.relative_to(folder)
            inside = source.resolve().is_relative_to(folder.resolve())  # not through a link
            if inside and source.is_file() and not _SKIPPED & set(relative.parts):
                copies[view / path / relative] = source
    for target, source in copies.items():
        if not target.exists() or target.stat().st_mtime != source.stat().st_mtime:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    for stale in [p for p in view.rglob("*") if p.is_file() and p not in copies]:
        if not _SKIPPED & set(stale.relative_to(view).parts):
            stale.unlink()
    return copies


def typecheck() -> int:
    """Run mypy over the view, with the project's settings; its errors named by the real files."""
    copies = build()
    real = {str(v.relative_to(VIEW)): str(s.relative_to(ROOT)) for v, s in copies.items()}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
        ],
        cwd=VIEW,
        capture_output=True,
        text=True,
        env={**os.environ, "MYPYPATH": ""},
    )
    for line in (done.stdout + done.stderr).splitlines():
        place, _, rest = line.partition(":")
        sys.stdout.write(f"{real.get(place, place)}:{rest}\n" if rest else line + "\n")
    return done.returncode


def contracts(view: Path) -> subprocess.CompletedProcess[str]:
    """Check the import contracts (``[tool.importlinter]``) over a view as it stands.

    import-linter finds a package by its folders, as mypy does, and puts the working directory
    first on the import path, so it runs inside the view.
    """
    return subprocess.run(
        [
            str(Path(sys.executable).with_name("lint-imports")),
            "--no-cache",
            str(ROOT / "pyproject.toml"),
        ],
        cwd=view,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(view)},
    )


def layers() -> int:
    """Bring the view up to date and check the import contracts there; 0 when all are kept."""
    build()
    done = contracts(VIEW)
    sys.stdout.write(
        (done.stdout.partition("Contracts\n---------")[2] or done.stdout) + done.stderr
    )
    return done.returncode


if __name__ == "__main__":
    verbs = {
        "checkout": lambda: build(CHECKOUT, everything=True) and 0,
        "typecheck": typecheck,
        "layers": layers,
    }
    if len(sys.argv) != 2 or sys.argv[1] not in verbs:
        sys.exit(f"usage: python -m tests.package_view {'|'.join(verbs)}")
    sys.exit(verbs[sys.argv[1]]())
