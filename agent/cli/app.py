"""The ``ripplegraph`` application: its help, its refusals, and what every verb shares.

Help is click's plain layout (a flag reads as a flag, nothing is marked up), with the verbs
listed in the groups ``SECTIONS`` names.  Every refusal is one ``error:`` line on stderr and
exit status 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup

import ripplegraph
from ripplegraph.agent.context import Deployed, Deployment, ModelSettings, default_store_dir
from ripplegraph.agent.errors import RippleGraphError

console = Console()
errors = Console(stderr=True)

MEMORY, RECALL, INSPECT, SERVE, BENCH = (
    "Remember and forget",
    "Recall",
    "Inspect and maintain",
    "Serve",
    "Measure",
)
SECTIONS = (MEMORY, RECALL, INSPECT, SERVE, BENCH)
"""The help's groups of verbs, in the order it lists them."""


class Verbs(TyperGroup):
    """The verbs, listed by section, and every refusal reported alike.

    ``RippleGraphError`` is what RippleGraph refuses on purpose; ``ValueError`` is bad input
    caught by validation (pydantic's errors among them).  Both become the message and exit
    status 2, with no traceback.
    """

    def invoke(self, ctx: Any) -> Any:
        """Run the command, turning a refusal into its message and exit status 2."""
        try:
            return super().invoke(ctx)
        except (RippleGraphError, ValueError) as error:
            raise fail(str(error)) from error

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
        cls=Verbs, no_args_is_help=True, add_completion=False, rich_markup_mode=None, **settings
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
    **settings: Any,
) -> Deployed:
    """The deployment the common options name, bound to the run's choices."""
    deployment = Deployment(
        store_dir=str(store or default_store_dir()),
        chroma_url=chroma_url or None,
        database_url=database_url or None,
        llm=ModelSettings(model=model or None, base_url=base_url or None),
    )
    return deployment.bind(**settings)


def fail(message: str) -> typer.Exit:
    """Print ``error: message`` on stderr; the exit (status 2) to raise."""
    errors.print(f"[red]error:[/red] {escape(message)}", soft_wrap=True)
    return typer.Exit(code=2)


def known_namespace(context: Deployed, namespace: str) -> None:
    """Refuse a namespace the store never held: a typo must not read as "no memories"."""
    memory = context.store()
    if not memory.known(namespace):
        listed = ", ".join(memory.holding_namespaces(limit=20)) or "none yet"
        raise fail(
            f"unknown namespace {namespace!r} in {context.deployment.store_dir} (known: {listed})"
        )
