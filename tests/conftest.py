"""Shared fixtures: no network beyond loopback, offline model settings, temp stores."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("LANGSMITH_TRACING", "false")

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


class NetworkAccessError(RuntimeError):
    """A test tried to reach a host other than loopback."""


def _check(address: Any) -> None:
    if isinstance(address, tuple) and address:
        host = str(address[0])
        try:
            if ipaddress.ip_address(host).is_loopback:
                return
        except ValueError:
            if host == "localhost":
                return
        raise NetworkAccessError(f"network access to {address!r} is not allowed in tests")


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any socket connection outside loopback (Unix sockets are fine)."""

    def guarded_connect(self: socket.socket, address: Any) -> None:
        _check(address)
        return _real_connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        _check(address)
        return _real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)


@pytest.fixture
def store_dir(tmp_path: Path) -> Iterator[Path]:
    """A fresh store directory."""
    yield tmp_path / "store"
