"""The ``ripplegraph`` application: its help, its refusals, and what every verb shares.

Help is click's plain layout (a flag reads as a flag, nothing is marked up), with the verbs
listed in the groups ``SECTIONS`` names.  Every refusal is one ``error:`` line on stderr and
exit status 2; Ctrl-C is one ``error: interrupted`` line and exit status 130.  What is printed
is printed as text (``PlainConsole``): memory text is anyone's words, never markup and never
a command to the terminal.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.text import Text
from typer.core import TyperGroup

import ripplegraph
from ripplegraph.agent.errors import RippleGraphError
from ripplegraph.agent.paths import default_store_dir, holds_store

if TYPE_CHECKING:
    from ripplegraph.agent.context import Deployed
    from ripplegraph.agent.store import MemoryStore

UNWRAPPED = 1 << 16
"""Columns of output that goes to a pipe or a file: no line is wrapped (a table's width is its
content's)."""
INTERRUPTED = 130
"""The exit status after Ctrl-C (128 + SIGINT), as shells report it."""
_UNSHOWN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def escaped(text: str) -> str:
    r"""``text`` with what a terminal would act on written as escapes (ESC as ``\x1b``).

    Control characters but tab and newline, and bidirectional overrides: a memory must not
    clear the screen, set the window title or make its text read backwards.
    """
    return _UNSHOWN.sub(lambda found: found.group().encode("unicode_escape").decode(), text)


class PlainConsole(Console):
    """A console that prints every string as the text it is.

    No string is read as markup or emoji, and each is ``escaped``: memory text arrives from
    MCP, chat and the browser, so ``[/bold]`` in it is two words and a bracket.  What the CLI
    styles itself it builds as ``rich.text.Text``.
    """

    def render_str(self, text: str, **options: Any) -> Text:
        """``text`` as plain, escaped text (every string printed passes here)."""
        options.update(markup=False, emoji=False, highlight=False)
        return super().render_str(escaped(text), **options)


def _console(stderr: bool = False) -> Console:
    """A console as wide as its terminal; to a pipe or a file, lines as long as they are."""
    terminal = (sys.stderr if stderr else sys.stdout).isatty()
    return PlainConsole(
        stderr=stderr, width=None if terminal else UNWRAPPED, soft_wrap=not terminal
    )


def styled(style: str, label: str, message: str) -> Text:
    """``label`` in ``style`` and then ``message`` as plain, escaped text."""
    return Text.assemble((label, style), " ", escaped(message))


console = _console()
errors = _console(stderr=True)

MEMORY, RECALL, INSPECT, SERVE, BENCH = (
    "Remember and forget",
    "Recall",
    "Inspect and maintain",
    "Serve",
    "Measure",
)
SECTIONS = (MEMORY, RECALL, INSPECT, SERVE, BENCH)
"""The help's groups of verbs, in the order it lists them."""


CLICK_ERROR: type[Any] = next(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"
)
"""Click's error root, wherever this Typer keeps Click (its own copy, or the package)."""


class Verbs(TyperGroup):
    """The verbs, listed by section, and every refusal reported alike.

    ``RippleGraphError`` is what RippleGraph refuses on purpose; ``ValueError`` is bad input
    caught by validation (pydantic's errors among them).  Both become the message and exit
    status 2, with no traceback.
    """

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        """Run the application; a usage mistake is one ``error:`` line too (exit status 2).

        Click would print a usage line, a hint and ``Error: …``; here it is the message and
        where help is.  Help asked for by giving no arguments is still shown whole.
        """
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except CLICK_ERROR as mistake:
            if type(mistake).__name__ == "NoArgsIsHelpError":
                mistake.show()
                sys.exit(mistake.exit_code)
            where = getattr(mistake, "ctx", None)
            hint = f" (see '{where.command_path} --help')" if where is not None else ""
            message = mistake.format_message().rstrip(".") + hint
            errors.print(styled("red", "error:", message), soft_wrap=True)
            sys.exit(mistake.exit_code)
        except (typer.Abort, KeyboardInterrupt):
            errors.print(styled("red", "error:", "interrupted"), soft_wrap=True)
            sys.exit(INTERRUPTED)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: Any) -> Any:
        """Run the command: a refusal is its message and exit status 2, Ctrl-C status 130.

        A file the command cannot read or write is a refusal too (``OSError``: a missing
        folder, a full disk, a directory where a file was named).
        """
        try:
            return super().invoke(ctx)
        except (RippleGraphError, ValueError) as error:
            raise fail(str(error)) from error
        except OSError as error:
            where = f": {error.filename}" if error.filename else ""
            raise fail(f"{error.strerror or error}{where}") from error
        except KeyboardInterrupt:
            errors.print(styled("red", "error:", "interrupted"), soft_wrap=True)
            raise typer.Exit(code=INTERRUPTED) from None

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The commands under their sections' headings (others under "Commands")."""
        listed: dict[str, list[tuple[str, str]]] = {}
        commands = [(name, self.get_command(ctx, name)) for name in self.list_commands(ctx)]
        shown = [(name, command) for name, command in commands if command and not command.hidden]
        if not shown:
            return
        width = formatter.width - 6 - max(len(name) for name, _ in shown)
        for name, command in shown:
            section = getattr(command, "rich_help_panel", None) or "Commands"
            listed.setdefault(section, []).append((name, command.get_short_help_str(width)))
        order = {section: place for place, section in enumerate(SECTIONS)}
        for section in sorted(listed, key=lambda s: order.get(s, len(SECTIONS))):
            with formatter.section(section):
                formatter.write_dl(listed[section])


def group(**settings: Any) -> typer.Typer:
    """A Typer app with the house's help layout and refusals."""
    return typer.Typer(
        cls=Verbs,
        no_args_is_help=True,
        add_completion=False,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,  # a bug's traceback is Python's, without its locals
        **settings,
    )


app = group(help="RippleGraph: long-term memory for LLM agents.")


def _version(show: bool) -> None:
    if show:
        typer.echo(f"ripplegraph {ripplegraph.__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """RippleGraph: long-term memory for LLM agents.

    Remember what was said, recall the evidence a question needs, and forget it again, on
    this machine (no key, no network) or with a chat model.
    """


StoreOption = Annotated[
    Path | None,
    typer.Option(
        "--store",
        help="Store directory [default: $RIPPLEGRAPH_STORE or a per-user data directory].",
    ),
]
ChromaOption = Annotated[
    str | None,
    typer.Option(
        "--chroma-url",
        envvar="RIPPLEGRAPH_CHROMA_URL",
        help="Chroma server (http://host:port) for vectors instead of the embedded store.",
    ),
]
DatabaseOption = Annotated[
    str | None,
    typer.Option(
        "--database-url",
        envvar="RIPPLEGRAPH_DATABASE_URL",
        help="PostgreSQL URL (postgresql://…) for the relational side [default: graph.sqlite "
        "in the store].",
    ),
]
ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        envvar="RIPPLEGRAPH_MODEL",
        help="Chat model for the LLM roles ('openai:gpt-4.1-mini', or the model name served at "
        "--base-url) [default: none, the offline policies].",
    ),
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        envvar="OPENAI_BASE_URL",
        help="OpenAI-compatible endpoint for --model (vLLM, Ollama, llama.cpp server).",
    ),
]
NamespaceOption = Annotated[str, typer.Option("--namespace", "-n", help="Namespace to use.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]


def context_of(
    store: Path | None,
    chroma_url: str | None,
    database_url: str | None,
    model: str | None = None,
    base_url: str | None = None,
    *,
    reading: bool = False,
    **settings: Any,
) -> Deployed:
    """The deployment the common options name, bound to the run's choices.

    A command that only reads (``reading``) refuses a directory that holds no store rather
    than create one: a mistyped ``--store`` must not read as an empty memory.  The settings
    are imported here, not with the application: ``--help`` and a refusal need none of it.
    """
    from ripplegraph.agent.context import Deployment, ModelSettings

    directory = Path(store or default_store_dir())
    if directory.exists() and not directory.is_dir():
        raise fail(f"the store {directory} is a file; --store names a directory")
    if reading and not holds_store(directory):
        raise fail(
            f"no store at {directory}: check --store (or $RIPPLEGRAPH_STORE); "
            "'ripplegraph add' or 'ripplegraph ingest' creates one"
        )
    deployment = Deployment(
        store_dir=str(directory),
        chroma_url=chroma_url or None,
        database_url=database_url or None,
        llm=ModelSettings(model=model or None, base_url=base_url or None),
    )
    return deployment.bind(**settings)


def store_of(context: Deployed) -> MemoryStore:
    """The store a command's context names, opened by the services.

    They are imported here, not with the application: ``--help`` and a refusal open nothing.
    """
    from ripplegraph.agent.services import Services

    return Services(context.deployment).store()


def fail(message: str) -> typer.Exit:
    """Print ``error: message`` on stderr; the exit (status 2) to raise."""
    errors.print(styled("red", "error:", message), soft_wrap=True)
    return typer.Exit(code=2)


def note(message: str) -> None:
    """Print ``note: message`` on stderr."""
    errors.print(styled("yellow", "note:", message), soft_wrap=True)


def named(context: Deployed, name: str, *, held: bool = True) -> str:
    """The namespace ``-n name`` is stored under (``agent.memory.items.namespace_named``).

    With ``held``, a name the store never held is refused: a typo must not read as "no
    memories".
    """
    from ripplegraph.agent.memory.items import labels_of, name_of, stored_namespace

    memory = store_of(context)
    namespace = stored_namespace(labels_of(name), memory.known)
    if held and not memory.known(namespace):
        listed = ", ".join(name_of(n) for n in memory.holding_namespaces(limit=20)) or "none yet"
        raise fail(
            f"unknown namespace {name!r} in the store {context.deployment.store_dir} "
            f"(known: {listed}; is --store right?)"
        )
    return namespace
