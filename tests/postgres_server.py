"""A throwaway PostgreSQL cluster for the tests: initdb in a directory, a unix socket, no TCP.

``.ci/run`` starts one with ``python -m tests.postgres_server start DIR`` (it prints the admin
URL) and stops it with ``… stop DIR``; without one, the test session starts its own when the
server binaries are installed (Debian's ``postgresql`` package).  As root, the cluster runs
as the ``postgres`` user, since PostgreSQL refuses to run as root.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg

PORT = 5433  # names the socket file; nothing listens on TCP


def binaries() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl``, if PostgreSQL is installed."""
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    installed = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(installed[-1]).parent if installed else None


def _as_owner(command: list[str]) -> list[str]:
    """``command`` run as ``postgres`` when this process is root."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


def start(directory: Path) -> str:
    """Create and start a cluster under ``directory``; the URL of its ``postgres`` database."""
    bin_dir = binaries()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL's server binaries (initdb, pg_ctl) are not installed")
    data, sockets = directory / "data", directory / "sockets"
    sockets.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        owner = pwd.getpwnam("postgres")
        for path in (directory, sockets):
            os.chown(path, owner.pw_uid, owner.pw_gid)
    initdb = [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"]
    subprocess.run(_as_owner(initdb), check=True, capture_output=True)
    return resume(directory)


def resume(directory: Path) -> str:
    """Start the cluster under ``directory`` again (after ``halt`` or ``stop``); its URL."""
    bin_dir = binaries()
    assert bin_dir is not None
    data, sockets = directory / "data", directory / "sockets"
    # Each store a test opens keeps its connections for the session: room for all of them.
    options = f"-k {sockets} -c listen_addresses='' -p {PORT} -c fsync=off -c max_connections=1000"
    log = str(directory / "server.log")
    pg_ctl = [str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l", log, "-w", "start"]
    subprocess.run(_as_owner(pg_ctl), check=True, capture_output=True)
    return f"postgresql://postgres@/postgres?host={sockets}&port={PORT}"


def halt(directory: Path) -> None:
    """Stop the cluster at once, as a crash or a pulled cable would (immediate shutdown)."""
    bin_dir = binaries()
    assert bin_dir is not None
    pg_ctl = [str(bin_dir / "pg_ctl"), "-D", str(directory / "data"), "-m", "immediate", "stop"]
    subprocess.run(_as_owner(pg_ctl), check=True, capture_output=True)


def stop(directory: Path) -> None:
    """Stop the cluster under ``directory`` (fast shutdown)."""
    bin_dir = binaries()
    if bin_dir is not None and (directory / "data").exists():
        pg_ctl = [str(bin_dir / "pg_ctl"), "-D", str(directory / "data"), "-m", "fast", "stop"]
        subprocess.run(_as_owner(pg_ctl), check=False, capture_output=True)


def new_database(admin_url: str) -> str:
    """A fresh empty database on the server ``admin_url`` names; its URL."""
    name = f"rg_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    base, _, query = admin_url.partition("?")
    return f"{base.rsplit('/', 1)[0]}/{name}" + (f"?{query}" if query else "")


if __name__ == "__main__":
    action, where = sys.argv[1], Path(sys.argv[2])
    if action == "start":
        sys.stdout.write(start(where) + "\n")
    else:
        stop(where)
