"""Served with authentication: every signed-in user is one tenant, seeing only their own.

``langgraph.served.json`` names this module (``"auth": {"path":
"./agent/surfaces/auth.py:auth"}``), so ``langgraph dev --config langgraph.served.json`` (or
``langgraph up``) serves the graphs to users who present a bearer token. Tokens live only as
SHA-256 digests in a users file — the deployment's ``$RIPPLEGRAPH_USERS``, else ``users.json``
in the store — that ``ripplegraph users add NAME`` writes. The graphs read the user's namespace
from the authenticated user (``agent.context.tenant``), never from a run's input; each thread,
run and cron belongs to the user who made it, and nobody else can list, read, change or delete
it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Any

from langgraph_sdk import Auth
from pydantic import BaseModel

from ripplegraph.agent.errors import InvalidValueError
from ripplegraph.agent.memory.items import namespace_named, namespace_of
from ripplegraph.agent.paths import default_store_dir

auth = Auth()


class User(BaseModel):
    """One user of a served deployment: who they are, their memory, their token's digest."""

    identity: str
    namespace: str
    token_sha256: str


def users_file() -> Path:
    """``$RIPPLEGRAPH_USERS``, else ``users.json`` beside the deployment's store."""
    return Path(os.environ.get("RIPPLEGRAPH_USERS") or Path(default_store_dir()) / "users.json")


def load_users(path: Path) -> list[User]:
    """The users the file holds (none when it does not exist)."""
    if not path.is_file():
        return []
    raw = json.loads(path.read_text(encoding="utf-8"))
    return [User.model_validate(u) for u in raw.get("users", [])]


def _save(path: Path, users: list[User]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".tmp")
    partial.write_text(
        json.dumps({"users": [u.model_dump() for u in users]}, indent=2), encoding="utf-8"
    )
    partial.chmod(0o600)
    partial.replace(path)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def add_user(path: Path, identity: str, namespace: str | None = None) -> str:
    """Add a user (their namespace defaults to their identity); returns their new token.

    The token is shown once: only its digest is stored.  Adding an existing identity again
    replaces its token (a rotation).  The namespace is a name as every surface takes one
    (``namespace_named``); the file keeps where it is stored.
    """
    chosen = namespace_named(namespace or identity)
    token = "rg_" + secrets.token_urlsafe(32)
    users = [u for u in load_users(path) if u.identity != identity]
    for user in users:  # a namespace nested in another's would be reachable from it
        if _within(chosen, user.namespace) or _within(user.namespace, chosen):
            raise ValueError(
                f"namespace {chosen!r} overlaps {user.namespace!r}, {user.identity!r}'s"
            )
    users.append(User(identity=identity, namespace=chosen, token_sha256=_digest(token)))
    _save(path, users)
    return token


def remove_user(path: Path, identity: str) -> bool:
    """Remove a user; returns whether they were there (their memories stay until forgotten)."""
    users = load_users(path)
    kept = [u for u in users if u.identity != identity]
    if len(kept) != len(users):
        _save(path, kept)
    return len(kept) != len(users)


def user_for(token: str, users: list[User]) -> User | None:
    """The user a bearer token belongs to, compared in constant time."""
    digest = _digest(token)
    found = None
    for user in users:
        if hmac.compare_digest(user.token_sha256, digest):
            found = user
    return found


@auth.authenticate
async def authenticate(authorization: str | None) -> Auth.types.MinimalUserDict:
    """``Authorization: Bearer <token>`` → the user, with the namespace the graphs use."""
    scheme, _, token = (authorization or "").partition(" ")
    user = user_for(token.strip(), load_users(users_file())) if scheme.lower() == "bearer" else None
    if user is None:
        raise Auth.exceptions.HTTPException(
            status_code=401, detail="a valid bearer token is needed"
        )
    return {"identity": user.identity, "namespace": user.namespace}  # type: ignore[typeddict-unknown-key]


@auth.on
async def owner_only(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType:
    """Threads, runs and crons: stamped with their creator, visible to their creator only."""
    if isinstance(value, dict):
        metadata = value.get("metadata")
        if metadata is None:
            metadata = value["metadata"] = {}
        metadata["owner"] = ctx.user.identity  # in place: the server holds this very dict
    return {"owner": ctx.user.identity}


@auth.on.assistants.read
async def read_assistants(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """The deployment's graphs are readable by every user (they hold no one's data)."""
    return True


@auth.on.assistants.search
async def search_assistants(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """As ``read_assistants``."""
    return True


@auth.on.assistants
async def change_assistants(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """Creating, changing or deleting assistants is the operator's, not a user's."""
    raise Auth.exceptions.HTTPException(status_code=403, detail="assistants are the deployment's")


def _within(namespace: str, owner: str) -> bool:
    """Whether ``namespace`` is ``owner``'s memory or one below it (``owner/...``)."""
    return namespace == owner or namespace.startswith(owner + "/")


@auth.on.store
async def own_store_namespace(ctx: Auth.types.AuthContext, value: Any) -> None:
    """The key-value store (``RippleGraphStore``): each user only in their own memory.

    A namespace tuple is a RippleGraph namespace (``agent.items``): ``(user's namespace,)``
    is the memory their chats use, longer tuples are below it; anything else is refused.
    """
    labels = tuple(value.get("namespace") or ())
    try:
        namespace = namespace_of(labels) if labels else ""
    except InvalidValueError as error:
        raise Auth.exceptions.HTTPException(status_code=400, detail=str(error)) from error
    try:
        own = str(ctx.user["namespace"] or ctx.user.identity)
    except (KeyError, TypeError):
        own = ctx.user.identity
    if not namespace or not _within(namespace, own):
        raise Auth.exceptions.HTTPException(status_code=403, detail="not your namespace")
