"""The command line's help reads like a CLI: plain text, flags as flags, verbs in groups."""

from __future__ import annotations

from collections.abc import Iterator

import typer
from typer.core import TyperGroup
from typer.testing import CliRunner

from ripplegraph.agent.cli import app
from ripplegraph.agent.cli.app import SECTIONS


def commands(group: TyperGroup, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for name, command in group.commands.items():
        yield (*path, name)
        if isinstance(command, TyperGroup):
            yield from commands(command, (*path, name))


def test_every_help_page_is_plain_text_with_flags_shown_as_flags() -> None:
    root = typer.main.get_command(app)
    assert isinstance(root, TyperGroup)
    pages = [(), *commands(root)]
    assert len(pages) > 25
    for path in pages:
        shown = CliRunner().invoke(app, [*path, "--help"], terminal_width=100)
        assert shown.exit_code == 0, (path, shown.output)
        for markup in ("``", "<bool>", "<list[", "\\[", "[bold]", ":class:"):
            assert markup not in shown.output, (path, markup, shown.output)


def test_the_verbs_are_listed_in_their_groups_and_version_is_a_flag() -> None:
    shown = CliRunner().invoke(app, ["--help"], terminal_width=100).output
    headings = [line.rstrip(":") for line in shown.splitlines() if line.endswith(":")]
    assert headings == ["Options", *SECTIONS]
    assert "  --version  Print the version." in shown
    memory = shown[shown.index(SECTIONS[0]) : shown.index(SECTIONS[1])]
    assert all(f"  {verb} " in memory for verb in ("ingest", "add", "forget", "export", "import"))
    assert "ripplegraph " in CliRunner().invoke(app, ["--version"]).output
