"""A writer to kill: puts, replaces and deletes through ``RippleGraphStore``, saying each one.

``python -m tests.put_loop loop RUN STORE [CHROMA_URL] [DATABASE_URL]`` puts, replaces and
deletes items of namespace ``ana`` for ever, printing ``begin OP KEY VALUE`` before each
operation and ``done OP KEY VALUE`` once it returned (acknowledged), flushed, so whoever kills
it knows what was acknowledged and what was under way.

``python -m tests.put_loop step STEP KEY TEXT STORE [CHROMA_URL] [DATABASE_URL]`` puts one
item and dies by SIGKILL at ``STEP`` (one of ``STEPS``), the way a crash would stop it there.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any

from ripplegraph import RippleGraphStore
from ripplegraph.agent.store import MemoryStore
from tests.conftest import deployed

NAMESPACE = ("ana",)
STEPS: dict[str, tuple[str, str]] = {
    "before the put is logged": ("begin_put", "before"),
    "the put logged": ("begin_put", "after"),
    "the replaced item forgotten": ("delete_item", "after"),
    "memories written, not linked": ("add_units", "after"),
    "memories linked": ("mark_linked", "after"),
    "before the item is saved": ("save_item", "before"),
    "the item saved": ("save_item", "after"),
}
"""Where a put can be cut: a store method, and whether the kill comes before or after it."""


def value(text: str) -> dict[str, str]:
    """The value every put writes: a turn said by Ana."""
    return {"text": text, "speaker": "Ana"}


def note(number: int, version: int = 0) -> str:
    """A distinct sentence for item ``number`` (``version`` tells replacements apart)."""
    return (
        f"Note {number}.{version}: the locker code for shelf {number} is {7919 * number % 10000}."
    )


def _open(args: list[str]) -> RippleGraphStore:
    store_dir, chroma_url, database_url = [*args, "", ""][:3]
    context = deployed(
        store_dir=store_dir, chroma_url=chroma_url or None, database_url=database_url or None
    )
    return RippleGraphStore(context=context)


def _say(*words: object) -> None:
    sys.stdout.write(" ".join(str(w) for w in words) + "\n")
    sys.stdout.flush()


def loop(run: str, args: list[str]) -> None:
    """Put, replace and delete for ever, saying what was begun and what was acknowledged."""
    store = _open(args)
    number = 0
    while True:
        number += 1
        key = f"{run}-{number}"
        operations: list[tuple[str, str, str]] = [("put", key, note(number))]
        if number % 4 == 0:
            operations.append(("put", f"{run}-{number - 1}", note(number - 1, 1)))
        if number % 3 == 0:
            operations.append(("delete", f"{run}-{number - 2}", ""))
        for operation, target, text in operations:
            _say("begin", operation, target, text)
            if operation == "put":
                store.put(NAMESPACE, target, value(text))
            else:
                store.delete(NAMESPACE, target)
            _say("done", operation, target, text)


def _dying(method: Callable[..., Any], when: str) -> Callable[..., Any]:
    @wraps(method)
    def cut(*args: Any, **kwargs: Any) -> Any:
        if when == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        result = method(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)
        return result

    return cut


def step(name: str, key: str, text: str, args: list[str]) -> None:
    """Put ``text`` under ``key`` and die at step ``name``."""
    store = _open(args)
    method, when = STEPS[name]
    setattr(MemoryStore, method, _dying(getattr(MemoryStore, method), when))
    store.put(NAMESPACE, key, value(text))
    _say("the put returned without reaching its kill point")
    sys.exit(3)


if __name__ == "__main__":
    if sys.argv[1] == "loop":
        loop(sys.argv[2], sys.argv[3:])
    else:
        step(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
