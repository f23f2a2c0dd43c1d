"""Verbs that serve a store to others: the memory browser, MCP, Studio's demo, served users."""

from __future__ import annotations

import socket
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from ripplegraph.agent.cli.app import (
    SERVE,
    BaseUrlOption,
    ChromaOption,
    DatabaseOption,
    ModelOption,
    NamespaceOption,
    StoreOption,
    app,
    console,
    context_of,
    errors,
    fail,
    group,
    named,
)
from ripplegraph.agent.cli.memory import ingest_sessions, items_of, summary_table

if TYPE_CHECKING:
    from starlette.types import ASGIApp

HostOption = Annotated[
    str,
    typer.Option(
        "--host",
        help="Address to listen on; off loopback needs --access-token (or a reverse proxy "
        "with TLS in front of 127.0.0.1).",
    ),
]
ProxyOption = Annotated[
    list[str] | None,
    typer.Option(
        "--trusted-proxy",
        metavar="<address>",
        help="A reverse proxy whose X-Forwarded-For and X-Forwarded-Proto are believed "
        "(repeatable; an address or a network such as 10.0.0.0/8) [default: none: the "
        "address a request comes from is its client].",
    ),
]
PublicUrlOption = Annotated[
    str | None,
    typer.Option(
        "--public-url",
        help="The URL a reverse proxy serves this at (https://memory.example.com): its host "
        "is answered and its origin is this server's own.",
    ),
]


@app.command(rich_help_panel=SERVE)
def ui(
    namespace: Annotated[
        list[str] | None,
        typer.Option(
            "--namespace",
            "-n",
            metavar="<str>",
            help="Serve only this namespace (repeatable) [default: every namespace].",
        ),
    ] = None,
    store: StoreOption = None,
    chroma_url: ChromaOption = None,
    database_url: DatabaseOption = None,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    host: HostOption = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port.")] = 8765,
    access_token: Annotated[
        str | None,
        typer.Option(
            "--access-token",
            envvar="RIPPLEGRAPH_UI_TOKEN",
            help="Token every page asks for first (required when --host is not loopback; "
            "a weak one is refused).",
        ),
    ] = None,
    trusted_proxy: ProxyOption = None,
    public_url: PublicUrlOption = None,
) -> None:
    """Browse and correct what the store remembers, in a web browser (local by default)."""
    try:
        import uvicorn  # noqa: F401 (``serve`` runs it: missing, the extra is missing)

        from ripplegraph.agent.surfaces.ui.app import create_app
    except ImportError as error:
        raise fail(
            f"the memory browser needs the 'ui' extra ({error.name} is missing): "
            "pip install -c constraints.txt 'ripplegraph[ui]'"
        ) from error
    access_token = auth_token(host, access_token, "--access-token (or RIPPLEGRAPH_UI_TOKEN)")
    context = context_of(store, chroma_url, database_url, model, base_url, reading=True)
    served = frozenset(named(context, name) for name in namespace or ())
    browser = create_app(
        context,
        namespaces=served or None,
        access_token=access_token,
        host=host,
        public_url=public_url,
    )
    serve(browser, host, port, trusted_proxy, f"memory browser on {url_of(host, port)}/")


def url_of(host: str, port: int) -> str:
    """The URL a surface on ``host`` and ``port`` answers at (IPv6 in brackets)."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def serve(app: ASGIApp, host: str, port: int, proxies: list[str] | None, what: str) -> None:
    """Serve ``app`` with uvicorn once its port is this process's; ``what`` says where.

    The socket is bound first, so a port in use is one ``error:`` line and nothing is
    announced; forwarded headers are believed only from the ``proxies`` the operator named
    (uvicorn's own default would believe any process on this machine).
    """
    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listening = socket.socket(family, socket.SOCK_STREAM)
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind((host.strip("[]"), port))
    except OSError as error:
        listening.close()
        raise fail(f"cannot listen on {url_of(host, port)}: {error.strerror or error}") from error
    config = uvicorn.Config(
        app,
        log_level="warning",
        proxy_headers=bool(proxies),
        forwarded_allow_ips=list(proxies or []),
    )
    errors.print(f"{what} (Ctrl-C stops it)")
    uvicorn.Server(config).run(sockets=[listening])


def auth_token(host: str, token: str | None, option: str) -> str | None:
    """The surface's credential once it passes the rule in ``agent.surfaces.access``."""
    from ripplegraph.agent.surfaces.access import checked_token

    return checked_token(host, token, option=option)


class Transport(StrEnum):
    """How 'ripplegraph mcp' talks to its clients."""

    STDIO = "stdio"
    STREAMABLE_HTTP = "streamable-http"


@app.command(rich_help_panel=SERVE)
def mcp(
    namespace: NamespaceOption,
    transport: Annotated[
        Transport,
        typer.Option(
            "--transport",
            help="stdio (a client starts this process) or streamable-http (a local server).",
        ),
    ] = Transport.STDIO,
    host: HostOption = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", min=1, max=65535, help="streamable-http: port.")
    ] = 8000,
    access_token: Annotated[
        str | None,
        typer.Option(
            "--access-token",
            envvar="RIPPLEGRAPH_MCP_TOKEN",
            help="streamable-http: the bearer token every request must carry (required when "
            "--host is not loopback; a weak one is refused).",
        ),
    ] = None,
    speaker: Annotated[
        str, typer.Option("--speaker", help="Whose words 'remember' stores.")
    ] = "User",
    store: StoreOption = None,
    chroma_url: ChromaOption = None,
    database_url: DatabaseOption = None,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
    trusted_proxy: ProxyOption = None,
    public_url: PublicUrlOption = None,
) -> None:
    """Serve one namespace to MCP clients: tools recall, remember and forget.

    The namespace is this command's, never a tool argument: a model cannot reach another.
    Over HTTP the Host and Origin are checked and, off loopback, a bearer token is required.
    Needs the mcp extra.
    """
    try:
        from ripplegraph.agent.surfaces.mcp_server import build_server, http_app
    except ImportError as error:
        message = f"the mcp extra is not installed ({error}): pip install 'ripplegraph[mcp]'"
        raise fail(message) from error
    if transport is Transport.STREAMABLE_HTTP:
        option = "--access-token (or RIPPLEGRAPH_MCP_TOKEN)"
        access_token = auth_token(host, access_token, option)
    context = context_of(store, chroma_url, database_url, model, base_url, user_name=speaker)
    server = build_server(items_of(context), named(context, namespace, held=False), speaker=speaker)
    if transport is Transport.STDIO:
        server.run("stdio")
        return
    app = http_app(server, host=host, token=access_token, public_url=public_url)
    serve(app, host, port, trusted_proxy, f"MCP over streamable HTTP on {url_of(host, port)}/mcp")


@app.command("seed-demo", rich_help_panel=SERVE)
def seed_demo(
    store: StoreOption = None,
    chroma_url: ChromaOption = None,
    database_url: DatabaseOption = None,
    model: ModelOption = None,
    base_url: BaseUrlOption = None,
) -> None:
    """Ingest the demo history into namespace 'demo' of the store Studio's graphs read."""
    from ripplegraph.studio import DEMO_NAMESPACE, demo_sessions

    context = context_of(store, chroma_url, database_url, model, base_url)
    summary = ingest_sessions(demo_sessions(), DEMO_NAMESPACE, context, show_progress=True)
    console.print(summary_table(summary))
    console.print(
        f"store: {context.deployment.store_dir} — set namespace = {DEMO_NAMESPACE} in Studio"
    )


users = group(help="Users of a deployment served with authentication (langgraph.served.json).")
app.add_typer(users, name="users", rich_help_panel=SERVE)

UsersFileOption = Annotated[
    Path | None,
    typer.Option(
        "--users-file",
        help="Users file [default: $RIPPLEGRAPH_USERS, else users.json in the store].",
    ),
]


def _users_path(users_file: Path | None, store: Path | None) -> Path:
    from ripplegraph.agent.surfaces import auth

    if users_file is not None:
        return users_file
    return Path(store) / "users.json" if store is not None else auth.users_file()


@users.command("add")
def add_user(
    identity: Annotated[str, typer.Argument(help="The user's identity (their namespace too).")],
    namespace: Annotated[
        str | None, typer.Option("--namespace", "-n", help="Their namespace [default: identity].")
    ] = None,
    users_file: UsersFileOption = None,
    store: StoreOption = None,
) -> None:
    """Add a user (or rotate their token) and print their bearer token, once."""
    from ripplegraph.agent.surfaces import auth

    path = _users_path(users_file, store)
    token = auth.add_user(path, identity, namespace)
    errors.print(f"added {identity!r} to {path}; their token (shown only now):")
    typer.echo(token)


@users.command("remove")
def remove_user(
    identity: Annotated[str, typer.Argument(help="The user to remove.")],
    users_file: UsersFileOption = None,
    store: StoreOption = None,
) -> None:
    """Remove a user's access (their memories stay until 'ripplegraph forget --all')."""
    from ripplegraph.agent.surfaces import auth

    path = _users_path(users_file, store)
    if not auth.remove_user(path, identity):
        raise fail(f"no user {identity!r} in {path}")
    console.print(f"removed {identity!r} from {path}")


@users.command("list")
def list_users(users_file: UsersFileOption = None, store: StoreOption = None) -> None:
    """The users and their namespaces (tokens are stored only as digests)."""
    from ripplegraph.agent.surfaces import auth

    path = _users_path(users_file, store)
    table = Table(title=f"users in {path}")
    table.add_column("identity")
    table.add_column("namespace")
    for user in auth.load_users(path):
        table.add_row(user.identity, user.namespace)
    console.print(table)
