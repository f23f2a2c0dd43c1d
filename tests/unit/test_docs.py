"""The README and the documentation: short where they must be, and free of workspace paths."""

from __future__ import annotations

from pathlib import Path

from typer.main import get_command
from typer.testing import CliRunner

import ripplegraph.studio
from ripplegraph.agent.cli import app
from tests.unit.test_cli_help import commands

ROOT = Path(__file__).resolve().parents[2]
STUDIO = Path(str(ripplegraph.studio.__file__)).parent  # the folder, or mutmut's copy of it
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), STUDIO / "README.md"]


def test_the_readme_starts_someone_in_one_screenful_of_pages() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250


def test_no_user_facing_text_names_this_workspace() -> None:
    helps = [
        CliRunner().invoke(app, [*path, "--help"]).output
        for path in [(), *commands(get_command(app))]
    ]
    texts = {str(page): page.read_text() for page in PAGES}
    texts.update({f"help {i}": text for i, text in enumerate(helps)})
    for name, text in texts.items():
        for path in ("../shared", "shared/data", "shared/seeds"):
            assert path not in text, (name, path)
