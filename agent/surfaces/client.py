"""``Memory`` and ``AsyncMemory``: the small client most agents reach for first.

``add`` what a user said, ``search`` for what an answer needs, ``get``/``get_all`` what is
kept, ``delete``/``delete_all`` to forget down to the bytes, ``export``/``import_`` a user's
whole memory as JSON Lines.  Each ``user_id`` is one namespace, the one the CLI's
``--namespace`` names (``agent.memory.items.namespace_named``: ``maya@example.com`` and
``名前`` are names too).  Built on ``RippleGraphStore``: an added conversation is one item
whose key is the returned id, and a search is a recall.  What the client cannot keep (a blank
or malformed message, a user id that names nothing) is refused with ``InvalidValueError``
naming the field, before anything is written.

``AsyncMemory`` runs each call of a ``Memory`` in a worker thread (``asyncio.to_thread``): the
database, vector and model calls underneath block, and a thread keeps the event loop free.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.store.base import Item, PutOp, SearchItem

from ripplegraph.agent.context import Context, Deployment
from ripplegraph.agent.errors import InvalidValueError
from ripplegraph.agent.memory.items import (
    checked_key,
    checked_messages,
    checked_page,
    checked_query,
    checked_said,
    labels_of,
)
from ripplegraph.agent.store.transfer import Transferred, export_namespace, import_namespace
from ripplegraph.agent.surfaces.langgraph_store import RippleGraphStore

Messages = str | Sequence[dict[str, Any] | BaseMessage]
"""What ``add`` takes: a text the user said, or a conversation (role/content dicts or messages)."""


@dataclass(frozen=True)
class Found:
    """A search's items, best first, and the evidence rendered for a prompt."""

    results: list[SearchItem]
    context: str


class Memory:
    """Long-term memory per user: add, search, get, delete, export, import."""

    def __init__(
        self,
        store_dir: str | Path | None = None,
        *,
        deployment: Deployment | None = None,
        context: Context | None = None,
    ) -> None:
        self.store = RippleGraphStore(store_dir, deployment=deployment, context=context)

    def add(
        self,
        messages: Messages,
        *,
        user_id: str,
        session_id: str | None = None,
        date: str | datetime | None = None,
    ) -> str:
        """Remember a text or conversation; returns its id (for ``get`` and ``delete``).

        A text or conversation that says nothing visible, or a message that is not one, is
        refused (``InvalidValueError``); a long text is remembered as several memories.
        """
        labels = labels_of(user_id)
        key = uuid.uuid4().hex
        if isinstance(messages, str):
            value: dict[str, Any] = {"text": checked_said(messages)}
        else:
            value = {"messages": checked_messages(messages)}
        if session_id is not None:
            value["session"] = session_id
        if date is not None:
            value["date"] = date.isoformat() if isinstance(date, datetime) else date
        self.store.run([PutOp(labels, key, value)])
        return key

    def search(self, query: str, *, user_id: str, limit: int = 10) -> Found:
        """What an answer to ``query`` needs from the user's memory, and its rendered context.

        An empty or too long query, or a limit that is not a whole number from 0, is refused
        (``InvalidValueError``), as the command line and the store's ``search`` refuse them.
        """
        namespace = self._namespace(user_id)
        query = checked_query(query)
        limit, _ = checked_page(limit)
        items, result = self.store.recall(namespace, query, wanted=limit)
        return Found(items[:limit], result.context)

    def get(self, memory_id: str, *, user_id: str) -> Item | None:
        """One memory by id (an id ``add`` returned, or a memory id from a search)."""
        return self.store.get_named(labels_of(user_id), _checked_id(memory_id))

    def get_all(self, *, user_id: str, limit: int = 100, offset: int = 0) -> list[SearchItem]:
        """The user's memories, oldest first (limit and offset checked as in ``search``)."""
        return self.store.list_named(labels_of(user_id), limit, offset)

    def delete(self, memory_id: str, *, user_id: str) -> None:
        """Forget one memory, from every channel, down to the bytes.

        ``memory_id`` is an id ``add`` returned or one a search or ``get_all`` gave; an id the
        user's memory does not hold raises ``NotFoundError``.
        """
        namespace = self._namespace(user_id)
        self.store.memory.forget_by_id(namespace, [_checked_id(memory_id)])

    def delete_all(self, *, user_id: str) -> int:
        """Forget everything the user's memory holds; returns how many memories it held."""
        return len(self.store.memory.forget(self._namespace(user_id), everything=True))

    def export(self, path: str | Path, *, user_id: str) -> Transferred:
        """Write the user's memory to ``path`` as JSON Lines (``agent.store.transfer``)."""
        return export_namespace(self.store.memory, self._namespace(user_id), Path(path))

    def import_(self, path: str | Path) -> Transferred:
        """Restore an export: the same ids, edges, root units and items, into an empty memory."""
        return import_namespace(self.store.memory, Path(path))

    def _namespace(self, user_id: str) -> str:
        return self.store.namespace_of(labels_of(user_id))


def _checked_id(memory_id: object) -> str:
    try:
        if isinstance(memory_id, str) and memory_id.strip():
            return checked_key(memory_id)
    except InvalidValueError:
        pass
    raise InvalidValueError(f"memory_id must be an id add or search gave, not {memory_id!r}")


class AsyncMemory:
    """``Memory`` for asyncio code: every call runs in a worker thread."""

    def __init__(
        self,
        store_dir: str | Path | None = None,
        *,
        deployment: Deployment | None = None,
        context: Context | None = None,
    ) -> None:
        self.sync = Memory(store_dir, deployment=deployment, context=context)

    async def add(
        self,
        messages: Messages,
        *,
        user_id: str,
        session_id: str | None = None,
        date: str | datetime | None = None,
    ) -> str:
        """See ``Memory.add``."""
        return await asyncio.to_thread(
            self.sync.add, messages, user_id=user_id, session_id=session_id, date=date
        )

    async def search(self, query: str, *, user_id: str, limit: int = 10) -> Found:
        """See ``Memory.search``."""
        return await asyncio.to_thread(self.sync.search, query, user_id=user_id, limit=limit)

    async def get(self, memory_id: str, *, user_id: str) -> Item | None:
        """See ``Memory.get``."""
        return await asyncio.to_thread(self.sync.get, memory_id, user_id=user_id)

    async def get_all(self, *, user_id: str, limit: int = 100, offset: int = 0) -> list[SearchItem]:
        """See ``Memory.get_all``."""
        return await asyncio.to_thread(
            self.sync.get_all, user_id=user_id, limit=limit, offset=offset
        )

    async def delete(self, memory_id: str, *, user_id: str) -> None:
        """See ``Memory.delete``."""
        await asyncio.to_thread(self.sync.delete, memory_id, user_id=user_id)

    async def delete_all(self, *, user_id: str) -> int:
        """See ``Memory.delete_all``."""
        return await asyncio.to_thread(self.sync.delete_all, user_id=user_id)

    async def export(self, path: str | Path, *, user_id: str) -> Transferred:
        """See ``Memory.export``."""
        return await asyncio.to_thread(self.sync.export, path, user_id=user_id)

    async def import_(self, path: str | Path) -> Transferred:
        """See ``Memory.import_``."""
        return await asyncio.to_thread(self.sync.import_, path)
