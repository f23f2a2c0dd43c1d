"""The memory model and its vocabulary, the floor every other one stands on.

Units, turns and sessions; the words and cues in them; key-value items and the files
sessions come from.

Every floor above depends on these and they depend on nothing of the project's but errors, so
the package name itself is the memory model (``from ripplegraph.agent.memory import
MemoryUnit``); the parsers and the cue extractor are its submodules.
"""

from ripplegraph.agent.memory.model import (
    FIRST_YEAR,
    LAST_YEAR,
    MAX_QUERY_CHARS,
    MAX_SAID_CHARS,
    MAX_TTL_MINUTES,
    MAX_TURN_CHARS,
    MemoryKind,
    MemoryUnit,
    Namespace,
    Provenance,
    RootUnit,
    Session,
    StoredItem,
    TimeInterval,
    Turn,
)

__all__ = [
    "FIRST_YEAR",
    "LAST_YEAR",
    "MAX_QUERY_CHARS",
    "MAX_SAID_CHARS",
    "MAX_TTL_MINUTES",
    "MAX_TURN_CHARS",
    "MemoryKind",
    "MemoryUnit",
    "Namespace",
    "Provenance",
    "RootUnit",
    "Session",
    "StoredItem",
    "TimeInterval",
    "Turn",
]
