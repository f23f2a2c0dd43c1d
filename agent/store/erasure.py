"""Erasure down to the bytes: SQLite free pages, write-ahead logs, and stored threads.

Deleting a row only unlinks it: SQLite keeps its bytes in free pages and in the write-ahead
log, and every checkpointed thread that quoted the memory keeps its own copy.  Forgetting
calls these helpers so that no file under the store still holds what was forgotten.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Iterable
from pathlib import Path

CHECKPOINTS = "checkpoints.sqlite"
"""The file under a store where the CLI keeps its checkpointed recall threads."""
MIN_QUOTED_TEXT = 12
"""Texts shorter than this are not searched for in threads ("Yes." would match too many)."""


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=30, isolation_level=None)
    db.execute("PRAGMA secure_delete=ON")
    return db


def zero_tail(path: Path, start: int) -> None:
    """Overwrite a file's bytes from ``start`` to its end with zeros, if any is not zero."""
    if not path.is_file() or path.stat().st_size <= start:
        return
    with path.open("r+b") as file:
        file.seek(start)
        tail = file.read()
        if tail.count(0) == len(tail):
            return
        file.seek(start)
        file.write(bytes(len(tail)))
        file.flush()
        os.fsync(file.fileno())


def vacuum(path: Path) -> None:
    """Rewrite a SQLite file without its free pages and empty its write-ahead log."""
    if not path.is_file():
        return
    db = _connect(path)
    try:
        db.execute("VACUUM")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()


def purge_threads(path: Path, ids: Iterable[str], texts: Iterable[str]) -> list[str]:
    """Delete every checkpointed thread that quotes a forgotten memory; returns their ids.

    A thread is purged whole rather than redacted: a recall's checkpoints quote the memory in
    its pool, evidence, rendered context and trace, and a redacted copy would no longer replay
    what happened.  A thread matches when any checkpoint or pending write holds a forgotten
    memory's id or (for texts of ``MIN_QUOTED_TEXT`` characters or more) its text.
    """
    needles = [
        *(i.encode() for i in ids),
        *(t.encode() for t in texts if len(t) >= MIN_QUOTED_TEXT),
    ]
    if not needles or not path.is_file():
        return []
    pattern = re.compile(
        b"|".join(re.escape(n) for n in sorted(set(needles), key=len, reverse=True))
    )
    db = _connect(path)
    try:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not {"checkpoints", "writes"} <= tables:
            return []
        quoting: set[str] = set()
        for sql in (
            "SELECT thread_id, checkpoint, metadata FROM checkpoints",
            "SELECT thread_id, value, channel FROM writes",
        ):
            for thread_id, *blobs in db.execute(sql):
                if thread_id not in quoting and any(
                    pattern.search(blob if isinstance(blob, bytes) else str(blob).encode())
                    for blob in blobs
                    if blob is not None
                ):
                    quoting.add(thread_id)
        if quoting:
            db.execute("BEGIN IMMEDIATE")
            for table in ("checkpoints", "writes"):
                db.executemany(
                    f"DELETE FROM {table} WHERE thread_id = ?",
                    [(t,) for t in sorted(quoting)],
                )
            db.execute("COMMIT")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return sorted(quoting)
    finally:
        db.close()
