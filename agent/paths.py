"""Where a store lives on disk: the default directory, and the file that marks one.

Kept apart from the store itself, so the command line can check a path without importing
the store, the models or the graphs.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

STORE_MARK = "write.lock"
"""The file every store directory holds from its first opening: its lock."""


def default_store_dir() -> str:
    """``$RIPPLEGRAPH_STORE``, else a per-user data directory."""
    return os.environ.get("RIPPLEGRAPH_STORE") or str(
        Path(platformdirs.user_data_dir("ripplegraph")) / "store"
    )


def holds_store(directory: str | Path) -> bool:
    """Whether ``directory`` is a store RippleGraph has opened (reading must not create one)."""
    return (Path(directory) / STORE_MARK).is_file()
