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


def private(path: str, flags: int) -> int:
    """An ``opener`` for ``open``: a file it creates is readable by its owner only (0600)."""
    return os.open(path, flags, 0o600)


def owner_only(path: Path, *, folder: bool = False) -> Path:
    """``path`` (an empty file or, with ``folder``, a folder) made if missing, its owner's alone.

    A store holds what people said: no other local user may read its files, and one made by
    an earlier version loses the group and world bits when it is next opened.
    """
    if folder:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    else:
        open(path, "a", opener=private).close()
    mode = path.stat().st_mode
    if mode & 0o077:
        path.chmod(mode & 0o700)
    return path
