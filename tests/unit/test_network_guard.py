import socket

import pytest

from tests.conftest import NetworkAccessError


def test_outside_connection_is_refused() -> None:
    with pytest.raises(NetworkAccessError), socket.socket() as sock:
        sock.connect(("203.0.113.7", 443))


def test_loopback_is_allowed() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.socket() as client:
            client.connect(server.getsockname())
