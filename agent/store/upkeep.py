"""A store's upkeep: erasing what a forget leaves, compaction, and the consistency check.

``MemoryStore`` inherits these; they share its lock, its relational side and its vectors.
Compaction closes the erasure window: what a forget could not remove at its own cost is
removed within it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path

from ripplegraph.agent.memory import MemoryUnit
from ripplegraph.agent.models.providers import Embedder
from ripplegraph.agent.store.backend import RelationalBackend
from ripplegraph.agent.store.derived import (
    evict_namespace,
)
from ripplegraph.agent.store.erasure import CHECKPOINTS, purge_threads, vacuum
from ripplegraph.agent.store.vector_layout import VectorLayout

_log = logging.getLogger(__name__)
DEMOTIONS = 100
"""Namespaces a background compaction moves from a collection into rows, at most."""
RELATIONAL_DEBT = "relational"
"""Debt part: the relational side's files hold dead rows until its ``compact``."""
THREADS_DEBT = "threads"
"""Debt part: the CLI's checkpoints file holds purged threads' bytes in free space."""


@dataclass(frozen=True)
class Compaction:
    """What one ``compact`` did: the debts it settled, the namespaces moved into rows."""

    settled: list[str]
    demoted: list[str]
    seconds: float


@dataclass
class CheckReport:
    """What ``MemoryStore.check`` found.

    ``problems`` are broken references (a consistent store has none); ``leftovers`` are
    invisible remains of an interrupted write or forget, which no channel returns and
    ``repair`` removes; ``pending_links`` are stored units whose edges an interrupted ingest
    did not write yet (re-running the ingest, or ``check --repair``, links them).
    """

    units: int = 0
    namespaces: int = 0
    problems: dict[str, int] = field(default_factory=dict)
    leftovers: dict[str, int] = field(default_factory=dict)
    pending_links: dict[str, list[str]] = field(default_factory=dict)
    repaired: bool = False

    @property
    def consistent(self) -> bool:
        """No broken references."""
        return not any(self.problems.values())


class Upkeep:
    """Erasure, compaction and checking, over the parts a ``MemoryStore`` opens."""

    directory: Path
    embedder: Embedder
    relational: RelationalBackend
    vectors: VectorLayout
    erasure_window: float
    _write_lock: AbstractContextManager[object]
    _compaction: threading.Timer | None
    _compaction_lock: threading.Lock

    def _erase_copies(self, units: Sequence[MemoryUnit]) -> None:
        """Remove the bytes a delete leaves, at the cost of what was deleted.

        Checkpointed threads quoting the units are purged and the relational log emptied now;
        what stays in the files' free space (SQLite's and Chroma's catalogs, the threads
        file, PostgreSQL's tables) and in a collection's index files is owed to the
        compaction that closes the erasure window (``compact``), scheduled here.
        """
        if not units:
            return
        threads = self.directory / CHECKPOINTS
        if purge_threads(threads, [u.id for u in units], [u.text for u in units]):
            self.relational.owe([THREADS_DEBT], time.time())
        if not self.relational.scrub():
            self.relational.owe([RELATIONAL_DEBT], time.time())
        self._schedule_compaction()

    # --- compaction: closing the erasure window ----------------------------------------------

    def debts(self) -> dict[str, float]:
        """What compactions owe, by part, with the time each debt began (oldest first)."""
        return self.relational.debts()

    def compact(self, *, demotions: int | None = DEMOTIONS) -> Compaction:
        """Remove every forgotten byte a forget left behind, and settle the debts.

        Collections owed a flush are saved by Chroma without their deleted vectors, Chroma's
        catalog and the threads file are vacuumed (embedded), the relational side's files are
        rewritten (SQLite's ``VACUUM``, PostgreSQL's ``VACUUM FULL``), and up to ``demotions``
        namespaces kept in collections they are too small for (every one with ``None``; a
        store of an earlier version holds many) move their vectors into rows.  Only parts a
        forget touched are rewritten; the relational side is rewritten whole, once per window
        with forgets, never per forget.
        """
        started = time.perf_counter()
        with self._write_lock:
            small = self.vectors.small_collections()
            moved = small if demotions is None else small[:demotions]
            for namespace in moved:
                self.vectors.demote(namespace)
                evict_namespace(self.directory, namespace)
            debts = self.relational.debts()
            self.vectors.compact(debts)
            if THREADS_DEBT in debts:
                vacuum(self.directory / CHECKPOINTS)
            settled = [part for part in debts if part != RELATIONAL_DEBT]
            if RELATIONAL_DEBT in debts and self.relational.compact():
                settled.append(RELATIONAL_DEBT)
            self.relational.settle(settled)
        self._schedule_compaction()
        return Compaction(sorted(settled), moved, time.perf_counter() - started)

    def compact_due(self) -> Compaction | None:
        """``compact`` if the oldest debt is as old as the erasure window, else nothing."""
        debts = self.relational.debts()
        if debts and min(debts.values()) + self.erasure_window <= time.time():
            return self.compact()
        return None

    def _schedule_compaction(self) -> None:
        """Have a daemon thread run ``compact_due`` when the oldest debt's window closes.

        One timer at a time: a later debt is younger, so the pending timer comes first.  A
        process that ends before the timer leaves its debts recorded; the next process to
        open the store schedules them.
        """
        with self._compaction_lock:
            if self._compaction is not None and self._compaction.is_alive():
                return
            debts = self.relational.debts()
            if not debts:
                return
            delay = max(0.0, min(debts.values()) + self.erasure_window - time.time())
            self._compaction = threading.Timer(delay, self._compact_in_background)
            self._compaction.daemon = True
            self._compaction.start()

    def _compact_in_background(self) -> None:
        with self._compaction_lock:
            self._compaction = None
        try:
            self.compact_due()
        except Exception:  # the store may have been closed, or a server be away: retry later
            _log.exception("compaction failed; it is tried again after the erasure window")
            with self._compaction_lock:
                self._compaction = threading.Timer(self.erasure_window, self._compact_in_background)
                self._compaction.daemon = True
                self._compaction.start()
            return
        self._schedule_compaction()

    def files(self) -> list[Path]:
        """Every file on this machine holding this store: its directory's and its database's.

        What a forget must leave without a trace (the soak and the byte tests read them).
        """
        inside = sorted(path for path in self.directory.rglob("*") if path.is_file())
        held = set(inside)
        return inside + [path for path in self.relational.files() if path not in held]

    def check(self, *, repair: bool = False) -> CheckReport:
        """Cross-check the relational side and the vectors; with ``repair``, mend them.

        Holds the write lock, so an ingest in another process is never mistaken for damage.
        A unit whose vector is missing is re-embedded from its stored text on repair; vectors
        where their namespace's do not live (a move cut short) are deleted there.
        """
        with self._write_lock:
            report = CheckReport(problems=self.relational.dangling())
            report.problems["puts cut short"] = len(self.relational.unfinished_puts())
            report.problems["puts set aside"] = len(self.relational.puts_set_aside())
            known = self.relational.namespaces()
            in_rows = set(self.relational.vector_namespaces())
            in_chroma = set(self.vectors.chroma.namespaces())
            missing_vectors = orphan_vectors = misplaced_vectors = 0
            for namespace in known:
                units = self.relational.unit_ids(namespace)
                report.units += len(units)
                report.namespaces += bool(units)
                rows = self.relational.vector_ids(namespace) if namespace in in_rows else set()
                held = self.vectors.chroma.ids(namespace) if namespace in in_chroma else set()
                if self.vectors.placement(namespace) == "collection":
                    vectors, misplaced = held, rows
                else:
                    vectors, misplaced = rows, held
                lost, orphans = sorted(units - vectors), sorted(vectors - units)
                missing_vectors += len(lost)
                orphan_vectors += len(orphans)
                misplaced_vectors += len(misplaced)
                pending = self.relational.pending_links(namespace)
                if pending:
                    report.pending_links[namespace] = pending
                if repair:
                    self._repair_vectors(namespace, lost, orphans, misplaced)
            stray = sorted((in_rows | in_chroma) - set(known))
            report.problems["units without a vector"] = missing_vectors
            report.leftovers = {
                "vectors without a unit": orphan_vectors,
                "vectors where their namespace's do not live": misplaced_vectors,
                "vectors of unknown namespaces": len(stray),
            }
            if repair:
                for namespace in stray:
                    self.vectors.drop(namespace)
                self.relational.repair_references()
                self.vectors.place_unplaced()
                report.repaired = True
            return report

    def _repair_vectors(
        self, namespace: str, lost: list[str], orphans: list[str], misplaced: set[str]
    ) -> None:
        """Delete vectors without a unit or in the wrong place; re-embed missing ones."""
        if orphans:
            self.vectors.delete(namespace, orphans)
        if misplaced and self.vectors.placement(namespace) == "collection":
            self.relational.delete_vectors(namespace, misplaced)
        elif misplaced:
            self.vectors.chroma.drop(namespace)
        if lost:
            restored = list(self.relational.units(namespace, lost).values())
            self.vectors.upsert(
                namespace,
                [u.id for u in restored],
                self.embedder.documents([u.text for u in restored]),
            )
