"""RippleGraph as LangGraph's ``BaseStore``: ``runtime.store``, ``/store/items``, LangMem's tools.

``put`` of a turn, a conversation or LangMem's ``{"content": …}`` runs the ingest graph;
``search`` with a query runs the recall graph, so an item comes back because the answer needs
it, not only because it resembles the query; ``delete`` forgets down to the bytes.  The two
primitives are ``batch`` and ``abatch``; ``abatch`` runs ``batch`` in a worker thread, because
the store's database, vector and model calls are blocking.

Items may have a time to live (``put(..., ttl=minutes)``, LangGraph's ``TTLConfig``): an
expired item is forgotten like a deleted one, its memories with it, by the sweep every
``batch`` starts with, ``sweep_ttl`` or the sweeper thread (``start_ttl_sweeper``).

A put either happens whole or not at all, whatever kills the process: a put that writes
memories is logged first, and its item saved with the log cleared in one transaction, so a
put cut short is finished when a store opens next (``finish_puts``).  Everything a put can be
refused for (its namespace, value, time to live) is checked before it is logged, and a logged
put that still fails to finish is set aside rather than tried before every later write:
``check`` reports it, ``check --repair`` withdraws it (``withdraw_puts``).  A put interrupted
by its caller (Ctrl-C) is not finished later: a new item is withdrawn at once, a replacement
finished before the interruption goes on.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from collections.abc import Callable, Coroutine, Iterable
from concurrent.futures import Future
from datetime import UTC, datetime
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    validate_op_namespace,
)
from langgraph.store.memory import _compare_values, _does_match

from ripplegraph.agent.context import Context, Deployed, Deployment
from ripplegraph.agent.errors import InvalidValueError, PartUnavailable, RippleGraphError
from ripplegraph.agent.memory import MemoryUnit, Session, StoredItem
from ripplegraph.agent.memory.items import (
    InvalidNamespace,
    checked_depth,
    checked_index,
    checked_key,
    checked_page,
    checked_query,
    checked_said,
    checked_ttl,
    checked_value,
    namespace_of,
    sessions_of,
    stored_namespace,
    tuple_of,
    unit_value,
)
from ripplegraph.agent.services import Services
from ripplegraph.agent.store import MemoryStore

if TYPE_CHECKING:  # listing and reading items never builds the recall graph
    from ripplegraph.agent.state import Evidence, RecallOutput

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_SWEEP_MINUTES = 5.0  # LangGraph's own stores' default sweep interval
_log = logging.getLogger(__name__)
_P = ParamSpec("_P")
_R = TypeVar("_R")


_SAME = "LangGraph's ``BaseStore.{}``; a namespace it refuses raises ``InvalidNamespace``."


def _ours(error: InvalidNamespaceError) -> InvalidNamespace:
    return error if isinstance(error, InvalidNamespace) else InvalidNamespace(str(error))


def _refusing(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """A ``BaseStore`` method whose namespace check refuses with ``InvalidNamespace``.

    LangGraph checks a namespace's labels before an operation reaches ``batch``, raising its
    own ``InvalidNamespaceError``; RippleGraph's refusal is that error and a
    ``RippleGraphError`` at once, so either kind of caller catches it.
    """

    @wraps(method)
    def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(*args, **kwargs)
        except InvalidNamespaceError as error:
            raise _ours(error) from error

    call.__doc__ = _SAME.format(method.__name__)
    return call


def _refusing_async(
    method: Callable[_P, Coroutine[Any, Any, _R]],
) -> Callable[_P, Coroutine[Any, Any, _R]]:
    """``_refusing`` for the asynchronous methods."""

    @wraps(method)
    async def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return await method(*args, **kwargs)
        except InvalidNamespaceError as error:
            raise _ours(error) from error

    call.__doc__ = _SAME.format(method.__name__)
    return call


def interrupted(error: BaseException) -> bool:
    """Whether Ctrl-C caused ``error``.

    A native module interrupted while it loads reports an ImportError raised from the
    KeyboardInterrupt (pybind11's "initialization failed"), not the interrupt itself.
    """
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


class RippleGraphStore(BaseStore):
    """A ``BaseStore`` over a RippleGraph memory store.

    ``RippleGraphStore()`` opens the deployment the environment names (``$RIPPLEGRAPH_STORE``
    and the other settings the CLI reads); ``store_dir``, a ``Deployment`` or a ``Deployed``
    context choose in code.
    ``context`` holds the run choices every recall and ingest uses (recipe, budgets, the
    speaker a user's words are stored under).  Namespace tuples map one to one onto
    RippleGraph namespaces (``agent.items``).

    An item's key is the key it was put under; a memory ingested some other way (the CLI, the
    chat graph) is an item too, under its memory id, with a turn-shaped value.

    ``ttl`` is LangGraph's ``TTLConfig``: ``default_ttl`` (minutes) for puts that name none,
    ``refresh_on_read`` for reads that do not say, ``sweep_interval_minutes`` for the sweeper.
    Other readers of the same memory (the chat graph, the CLI) see an expired item's memories
    until the next sweep.
    """

    supports_ttl = True
    get = _refusing(BaseStore.get)
    search = _refusing(BaseStore.search)
    put = _refusing(BaseStore.put)
    delete = _refusing(BaseStore.delete)
    list_namespaces = _refusing(BaseStore.list_namespaces)
    aget = _refusing_async(BaseStore.aget)
    asearch = _refusing_async(BaseStore.asearch)
    aput = _refusing_async(BaseStore.aput)
    adelete = _refusing_async(BaseStore.adelete)
    alist_namespaces = _refusing_async(BaseStore.alist_namespaces)

    def __init__(
        self,
        store_dir: str | Path | None = None,
        *,
        deployment: Deployment | None = None,
        context: Context | None = None,
        ttl: TTLConfig | None = None,
    ) -> None:
        chosen = deployment or (
            context.deployment if isinstance(context, Deployed) else Deployment()
        )
        if store_dir is not None:
            chosen = chosen.move(store_dir)
        choices = context.model_dump(exclude={"deployment"}) if context is not None else {}
        self._context: Deployed = chosen.bind(**choices)
        checked_ttl((ttl or {}).get("default_ttl"))
        self._store: MemoryStore = Services(self._context.deployment).store()
        self.ttl_config = ttl
        self._sweeper: threading.Thread | None = None
        self._swept: Future[None] = Future()  # ends when the running sweeper stops
        self._stop_sweeping = threading.Event()
        try:
            self.finish_puts()
        except RippleGraphError:  # the next put tries again; reads are served meanwhile
            _log.exception("a put cut short could not be finished now")

    @property
    def memory(self) -> MemoryStore:
        """The RippleGraph store under this one."""
        return self._store

    # --- the two primitives ---------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the operations in order; each result is at its operation's position.

        LangGraph's rule for labels (no ``.``, none empty) holds here as in every
        ``BaseStore``; a label it refuses raises ``InvalidNamespace``, which is LangGraph's
        ``InvalidNamespaceError`` and RippleGraph's ``InvalidValueError`` at once.
        """
        ops = list(ops)
        for op in ops:
            try:
                validate_op_namespace(op)
            except InvalidNamespaceError as error:
                raise _ours(error) from error
        return self.run(ops)

    def run(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` for callers that name memory as RippleGraph does (``Memory``, CLI, MCP).

        Only RippleGraph's rule for names holds (``agent.memory.items``), so a label may hold
        ``.`` (``maya@example.com``).  Every operation is checked before any runs, so one that
        is refused changes nothing; expired items are swept first, so no operation sees one.
        """
        ops = list(ops)
        for op in ops:
            self._check(op)
        self._store.sweep_expired()
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, PutOp):
                self._put(op)
                results.append(None)
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
        return results

    def _check(self, op: Op) -> None:
        """Refuse an operation the store cannot carry out whole (``InvalidValueError``)."""
        if isinstance(op, PutOp):
            namespace_of(op.namespace)
            checked_key(op.key)
            checked_ttl(op.ttl)
            index = checked_index(op.index)
            if op.value is not None and index is not False:
                self._sessions(op.key, checked_value(op.value), index or None)
            elif op.value is not None:
                checked_value(op.value)
        elif isinstance(op, GetOp):
            namespace_of(op.namespace)
            checked_key(op.key)
        elif isinstance(op, SearchOp):
            checked_page(op.limit, op.offset)
            if op.namespace_prefix:
                namespace_of(op.namespace_prefix)
            if op.query:  # None or "" lists the namespace
                checked_query(op.query)
            if op.filter is not None and not isinstance(op.filter, dict):
                raise InvalidValueError(f"a filter is a dict, not {op.filter!r}")
        elif isinstance(op, ListNamespacesOp):
            checked_page(op.limit, op.offset)
            checked_depth(op.max_depth)
        else:
            raise InvalidValueError(f"unknown store operation: {type(op).__name__}")

    def get_named(self, labels: tuple[str, ...], key: str) -> Item | None:
        """``get`` under RippleGraph's rule for names (``run``)."""
        found = self.run([GetOp(labels, key)])[0]
        return found if isinstance(found, Item) else None

    def list_named(self, labels: tuple[str, ...], limit: int, offset: int = 0) -> list[SearchItem]:
        """``search`` without a query (the namespace's items) under RippleGraph's rule for names."""
        found = self.run([SearchOp(labels, limit=limit, offset=offset)])[0]
        listed = found if isinstance(found, list) else []
        return [item for item in listed if isinstance(item, SearchItem)]

    def namespace_of(self, labels: tuple[str, ...]) -> str:
        """The RippleGraph namespace these labels are stored under in this store.

        ``agent.memory.items.namespace_of``, unless an earlier version wrote them under its own
        spelling (``stored_namespace``).
        """
        return stored_namespace(labels, self._store.known)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` in a worker thread (every call under it blocks)."""
        return await asyncio.to_thread(self.batch, list(ops))

    # --- time to live ---------------------------------------------------------------------------

    def sweep_ttl(self) -> int:
        """Forget every expired item and its memories, down to the bytes; how many."""
        return self._store.sweep_expired()

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> Future[None]:
        """Sweep expired items every interval in a daemon thread, until ``stop_ttl_sweeper``.

        The interval defaults to ``ttl_config["sweep_interval_minutes"]``, else 5 minutes.
        The future ends when the sweeper stops; a sweeper already running is not doubled, its
        future is returned.
        """
        if self._sweeper is not None and self._sweeper.is_alive():
            return self._swept
        done: Future[None] = Future()
        self._swept = done
        minutes = sweep_interval_minutes or (self.ttl_config or {}).get("sweep_interval_minutes")
        interval = 60.0 * float(minutes or _SWEEP_MINUTES)
        self._stop_sweeping.clear()

        def sweep_until_stopped() -> None:
            while not self._stop_sweeping.wait(interval):
                try:
                    self.sweep_ttl()
                except RippleGraphError:  # the next sweep retries what this one left
                    _log.exception("TTL sweep failed")
            done.set_result(None)

        self._sweeper = threading.Thread(
            target=sweep_until_stopped, name="ripplegraph-ttl-sweeper", daemon=True
        )
        self._sweeper.start()
        return done

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper thread; whether it stopped within ``timeout`` seconds."""
        if self._sweeper is None:
            return True
        self._stop_sweeping.set()
        self._sweeper.join(timeout)
        stopped = not self._sweeper.is_alive()
        if stopped:
            self._sweeper = None
        return stopped

    # --- operations -----------------------------------------------------------------------------

    def _get(self, op: GetOp) -> Item | None:
        labels, key = op.namespace, op.key
        namespace = self.namespace_of(labels)
        stored = self._store.items(namespace, [key])
        if stored:
            if op.refresh_ttl and stored[0].ttl_minutes is not None:
                self._store.refresh_items(namespace, [key])
            return _item(labels, stored[0])
        unit = self._store.get(namespace, [key]).get(key)
        return _unit_item(labels, unit) if unit is not None else None

    def _put(self, op: PutOp) -> None:
        namespace = self.namespace_of(op.namespace)
        with self._store.write_lock():
            self._finish_puts()
            existing = self._store.items(namespace, [op.key])
            if op.value is None:
                if existing:
                    self._store.delete_item(namespace, op.key)
                elif self._store.get(namespace, [op.key]):
                    self._store.forget(namespace, memory_ids=[op.key])
                return
            value = dict(op.value)
            index = None if op.index is None or op.index is False else list(op.index)
            sessions = [] if op.index is False else self._sessions(op.key, value, index)
            created = existing[0].created_at if existing else None
            kept = existing[0].unit_ids if existing else []
            same = bool(existing) and existing[0].value == value and bool(kept) == bool(sessions)
            if same or (existing and not kept and not sessions):
                # The same memory, or data replacing data: one transaction, nothing to ingest.
                self._store.save_item(namespace, op.key, value, kept, created, op.ttl)
                return
            intent = {
                "value": value,
                "index": False if op.index is False else index,
                "ttl": op.ttl,
                "created": created.isoformat() if created else None,
                "user_name": self._context.user_name,
            }
            try:
                self._store.begin_put(namespace, op.key, intent)
                self._apply(namespace, op.key, intent)
            except PartUnavailable:  # finished once the server is back
                raise
            except BaseException as error:
                if isinstance(error, Exception) and not interrupted(error):
                    self._set_aside(namespace, op.key, error)
                    raise
                # Ctrl-C: the caller never heard the put was made.
                if existing:  # its memories are forgotten already: only finishing keeps it
                    self._apply(namespace, op.key, intent)
                else:
                    self._withdraw(namespace, op.key, intent)
                if isinstance(error, Exception):
                    raise KeyboardInterrupt from error
                raise

    def _sessions(
        self, key: str, value: dict[str, Any], index: list[str] | None, user_name: str | None = None
    ) -> list[Session]:
        return sessions_of(key, value, user_name=user_name or self._context.user_name, index=index)

    def _apply(self, namespace: str, key: str, intent: dict[str, Any]) -> None:
        """Write a logged put: forget the item it replaces, remember, save the item.

        Every step can be run again from the start: a replaced item still saved is forgotten,
        memories already written are kept by the ingest's resume, and saving the item clears
        the log in the same transaction.  So a put cut short anywhere is finished by running
        this again (``finish_puts``).
        """
        value, index = intent["value"], intent["index"]
        sessions = [] if index is False else self._sessions(key, value, index, intent["user_name"])
        self._store.delete_item(namespace, key)
        units: list[str] = []
        if sessions:
            from ripplegraph.agent.surfaces.api import remember

            remember(sessions, namespace, self._context)
            for session in sessions:
                turns = [t.id for t in session.turns if t.id]
                units += self._store.turn_units(namespace, session.id, turns)
        created = datetime.fromisoformat(intent["created"]) if intent["created"] else None
        self._store.save_item(namespace, key, value, units, created, intent["ttl"])

    def finish_puts(self) -> int:
        """Finish every put a crash cut short (logged, its item not saved); how many were tried.

        Runs when the store opens and before each put, holding the write lock, so a put still
        under way in another process is waited for rather than taken for a crashed one.  A
        put that fails to finish is set aside (``withdraw_puts``), never tried again here.
        """
        if not self._store.unfinished_puts():
            return 0
        with self._store.write_lock():
            return self._finish_puts()

    def _finish_puts(self) -> int:
        """``finish_puts`` for a caller that holds the write lock."""
        unfinished = self._store.unfinished_puts()
        for namespace, key, intent in unfinished:
            _log.warning("finishing the put of %r in %r that was cut short", key, namespace)
            try:
                self._apply(namespace, key, intent)
            except PartUnavailable:
                raise
            except Exception as error:
                self._set_aside(namespace, key, error)
        return len(unfinished)

    def _set_aside(self, namespace: str, key: str, error: Exception) -> None:
        why = " ".join(f"{type(error).__name__}: {error}".split())[:500]
        _log.error("the put of %r in %r cannot finish and is set aside: %s", key, namespace, why)
        self._store.set_aside_put(namespace, key, why)

    def withdraw_puts(self) -> int:
        """Withdraw every put set aside: forget what memories it wrote, then its log; how many.

        ``check --repair`` runs it.  A put set aside failed before its caller heard it was
        made, so what it half wrote is removed rather than finished.
        """
        with self._store.write_lock():
            aside = self._store.puts_set_aside()
            for namespace, key, intent, _ in aside:
                self._withdraw(namespace, key, intent)
        return len(aside)

    def _withdraw(self, namespace: str, key: str, intent: dict[str, Any]) -> None:
        """Undo a logged put: forget the memories made of its turns, then its log."""
        try:
            index = intent["index"]
            sessions = (
                []
                if index is False
                else self._sessions(key, intent["value"], index, intent["user_name"])
            )
        except (RippleGraphError, KeyError, TypeError):  # refused before it wrote anything
            sessions = []
        written = [
            unit
            for session in sessions
            for unit in self._store.turn_units(
                namespace, session.id, [t.id for t in session.turns if t.id]
            )
        ]
        if written:
            self._store.forget(namespace, memory_ids=written)
        self._store.drop_put(namespace, key)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = self.namespace_of(op.namespace_prefix) if op.namespace_prefix else None
        namespaces = [
            ns
            for ns in self._store.holding_namespaces(prefix)
            if tuple_of(ns)[: len(op.namespace_prefix)] == op.namespace_prefix
        ]
        found: list[SearchItem] = []
        for namespace in namespaces:
            if op.query:
                found += self.recall(namespace, op.query, op.filter, op.offset + op.limit)[0]
            else:
                found += self._listed(namespace, op.filter)
        if op.query:
            found.sort(key=lambda item: -(item.score or 0.0))
        page = found[op.offset : op.offset + op.limit]
        if op.refresh_ttl:
            keys: dict[str, list[str]] = {}
            for item in page:
                keys.setdefault(self.namespace_of(item.namespace), []).append(item.key)
            for namespace, read in keys.items():
                self._store.refresh_items(namespace, read)
        return page

    def recall(
        self, namespace: str, query: str, where: dict[str, Any] | None = None, wanted: int = 10
    ) -> tuple[list[SearchItem], RecallOutput]:
        """Run the recall graph on a RippleGraph namespace; its items, best first, and output.

        Each item is the value put (or a memory's turn-shaped value) with a ``recall`` entry:
        the memory recalled, its provenance, ρ's parts and every way it was reached.  Items
        that fail ``where`` are left out; the evidence budget grows to ``wanted`` if smaller.
        """
        context = self._context
        if wanted > context.recall.evidence_k:
            recall_limits = context.recall.model_copy(update={"evidence_k": wanted})
            context = context.model_copy(update={"recall": recall_limits})
        from ripplegraph.agent.surfaces.api import recall

        result = recall(query, namespace, context)
        labels = tuple_of(namespace)
        keys = self._store.item_keys(namespace, [e.memory.id for e in result.evidence])
        put_keys = set(keys.values())
        stored = {s.key: s for s in self._store.items(namespace, put_keys)}
        items: dict[str, SearchItem] = {}
        for evidence in result.evidence:
            key = keys.get(evidence.memory.id, evidence.memory.id)
            if key in items or (key in put_keys and key not in stored):
                continue
            base = stored.get(key)
            value = base.value if base else unit_value(evidence.memory)
            if where and not _matches(value, where):
                continue
            created = base.created_at if base else _unit_time(evidence.memory)
            updated = base.updated_at if base else created
            items[key] = SearchItem(
                labels,
                key,
                {**value, "recall": _how(evidence)},
                created,
                updated,
                score=evidence.score,
            )
        return list(items.values()), result

    def _listed(self, namespace: str, where: dict[str, Any] | None) -> list[SearchItem]:
        labels = tuple_of(namespace)
        stored = self._store.items(namespace)
        made = {mid for s in stored for mid in s.unit_ids}
        listed = [SearchItem(labels, s.key, s.value, s.created_at, s.updated_at) for s in stored]
        for unit in self._store.all_units(namespace):
            if unit.id not in made:
                listed.append(_search_item(labels, unit))
        return [item for item in listed if not where or _matches(item.value, where)]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        found = [tuple_of(ns) for ns in self._store.holding_namespaces(_plain_prefix(op))]
        if op.match_conditions:
            found = [
                labels
                for labels in found
                if all(_does_match(condition, labels) for condition in op.match_conditions)
            ]
        if op.max_depth is not None:
            found = [labels[: op.max_depth] for labels in found]
        return sorted(set(found))[op.offset : op.offset + op.limit]


def add_said(
    store: RippleGraphStore,
    namespace: str,
    text: str,
    *,
    speaker: str = "User",
    session: str | None = None,
    date: str | None = None,
    key: str | None = None,
) -> str:
    """Remember one thing said as a put item (``ripplegraph add``, the browser, MCP); its key.

    Text that shows nothing is refused (``InvalidValueError``), so no surface stores an empty
    memory; a long text is remembered as several memories of one item.  ``key`` defaults to
    a new one.
    """
    value = {"text": checked_said(text), "speaker": speaker, "session": session, "date": date}
    key = key or uuid.uuid4().hex
    store.run([PutOp(tuple_of(namespace), key, {k: v for k, v in value.items() if v})])
    return key


def _plain_prefix(op: ListNamespacesOp) -> str | None:
    """The namespace a listing's prefix condition names, when it has no wildcard."""
    for condition in op.match_conditions or ():
        if condition.match_type == "prefix" and condition.path and "*" not in condition.path:
            return namespace_of(condition.path)
    return None


def _matches(value: dict[str, Any], where: dict[str, Any]) -> bool:
    """LangGraph's own filter semantics (its in-memory store's), so results agree with it.

    A filter that cannot be applied (an unknown operator, ``$gt`` against a word) is refused.
    """
    try:
        return all(_compare_values(value.get(key), wanted) for key, wanted in where.items())
    except (TypeError, ValueError, AttributeError) as error:
        raise InvalidValueError(f"the filter cannot be applied: {error}") from error


def _how(evidence: Evidence) -> dict[str, Any]:
    """How recall reached a memory: the memory, its provenance, ρ's parts and every path."""
    memory = evidence.memory
    return {
        "memory_id": memory.id,
        "memory": memory.text,
        "provenance": memory.provenance.model_dump(mode="json"),
        "score_parts": evidence.score_parts,
        "standing": evidence.standing,
        "reached_by": [source.model_dump(mode="json") for source in evidence.sources],
    }


def _unit_time(unit: MemoryUnit) -> datetime:
    moment = unit.provenance.session_time
    return moment.replace(tzinfo=UTC) if moment is not None else _EPOCH


def _item(labels: tuple[str, ...], stored: StoredItem) -> Item:
    return Item(
        value=stored.value,
        key=stored.key,
        namespace=labels,
        created_at=stored.created_at,
        updated_at=stored.updated_at,
    )


def _unit_item(labels: tuple[str, ...], unit: MemoryUnit) -> Item:
    moment = _unit_time(unit)
    return Item(
        value=unit_value(unit), key=unit.id, namespace=labels, created_at=moment, updated_at=moment
    )


def _search_item(labels: tuple[str, ...], unit: MemoryUnit) -> SearchItem:
    moment = _unit_time(unit)
    return SearchItem(labels, unit.id, unit_value(unit), moment, moment)


__all__ = ["RippleGraphStore"]
