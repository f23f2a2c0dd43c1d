"""Checkpointers for the CLI and tests (the LangGraph server brings its own).

Graph states hold RippleGraph's pydantic models; the serializer is told they are safe to
restore, instead of LangGraph's default of warning about (and later refusing) unknown types.
"""

from __future__ import annotations

import inspect
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from pydantic import BaseModel

from ripplegraph.agent import state
from ripplegraph.agent.memory import model
from ripplegraph.agent.paths import owner_only

MOVED = {model.__name__: "ripplegraph.agent.memory"}
"""Where a state type lived before: threads checkpointed then name it there (the package
re-exports it, so it still restores)."""


def _state_types() -> list[tuple[str, str]]:
    types = [
        (module.__name__, name)
        for module in (model, state)
        for name, value in vars(module).items()
        if inspect.isclass(value)
        and value.__module__ == module.__name__
        and issubclass(value, BaseModel | Enum)
    ]
    return sorted(types + [(MOVED[home], name) for home, name in types if home in MOVED])


def serializer() -> JsonPlusSerializer:
    """A serializer that restores RippleGraph's state types."""
    return JsonPlusSerializer(allowed_msgpack_modules=_state_types())


def memory_saver() -> InMemorySaver:
    """An in-process checkpointer (tests, notebooks)."""
    return InMemorySaver(serde=serializer())


@contextmanager
def sqlite_saver(path: Path) -> Iterator[SqliteSaver]:
    """A SQLite checkpointer at ``path`` (the CLI keeps threads beside the store)."""
    owner_only(path.parent, folder=True)
    connection = sqlite3.connect(owner_only(path), check_same_thread=False)
    try:
        yield SqliteSaver(connection, serde=serializer())
    finally:
        connection.close()
