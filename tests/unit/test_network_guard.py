import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import NetworkAccessError


def outside_connection() -> BaseException | None:
    """What connecting to a documentation address (RFC 5737) raises, if anything."""
    try:
        with socket.socket() as sock:
            sock.settimeout(2)
            sock.connect(("203.0.113.7", 443))
    except BaseException as error:
        return error
    return None


@pytest.fixture(scope="session")
def from_a_session_fixture() -> BaseException | None:
    return outside_connection()


@pytest.fixture(scope="module")
def from_a_module_fixture() -> BaseException | None:
    return outside_connection()


def test_outside_connection_is_refused() -> None:
    with pytest.raises(NetworkAccessError), socket.socket() as sock:
        sock.connect(("203.0.113.7", 443))
    with socket.socket() as sock, pytest.raises(NetworkAccessError):
        sock.connect_ex(("2001:db8::1", 443))


def test_the_guard_covers_fixtures_of_every_scope(
    from_a_session_fixture: BaseException | None, from_a_module_fixture: BaseException | None
) -> None:
    assert isinstance(from_a_session_fixture, NetworkAccessError)
    assert isinstance(from_a_module_fixture, NetworkAccessError)


def test_loopback_is_allowed() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.socket() as client:
            client.connect(server.getsockname())


def test_the_product_sets_its_own_offline_variables(tmp_path: Path) -> None:
    """A shell without any offline variable: opening a store and embedding sets them."""
    script = (
        "import os\n"
        "from ripplegraph.agent.context import Deployment\n"
        "from ripplegraph.agent.services import Services\n"
        f"store = Services(Deployment(store_dir={str(tmp_path / 'store')!r})).store()\n"
        "store.embedder.query('hello')\n"
        "print(os.environ.get('HF_HUB_OFFLINE'), os.environ.get('TRANSFORMERS_OFFLINE'),"
        " os.environ.get('ANONYMIZED_TELEMETRY'))\n"
    )
    offline = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "ANONYMIZED_TELEMETRY")
    env = {k: v for k, v in os.environ.items() if k not in offline}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "1", "False"]
