"""The memory browser behind a real reverse proxy: the recipe the guide gives, as it gives it.

The ``ripplegraph ui`` command and the nginx ``server`` block are read from
``docs/how-to/memory-browser.md`` (between its ``nginx`` markers), their ports and
certificate paths filled in, and run: Debian's nginx terminates TLS on a loopback port with a
certificate made here.  Through it the browser signs in with a ``Secure`` cookie, serves its
pages and takes its forms under the public host name, and throttles each real client (each
loopback address a client connects from) on its own, whatever ``X-Forwarded-For`` a client
sends.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ripplegraph.studio import DEMO_NAMESPACE, demo_sessions
from tests.conftest import deployed, free_port
from tests.integration.conftest import ingest
from tests.integration.test_network_surfaces import TOKEN, serving

pytestmark = pytest.mark.integration
GUIDE = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "memory-browser.md"
PUBLIC = "memory.example.com"
NGINX = shutil.which("nginx") or next(
    (path for path in ("/usr/sbin/nginx",) if Path(path).is_file()), None
)


def recipe() -> tuple[str, str]:
    """The guide's ``ripplegraph ui`` command and nginx ``server`` block."""
    text = GUIDE.read_text(encoding="utf-8")
    block = text.split("<!-- start: nginx -->")[1].split("<!-- end: nginx -->")[0]
    command = re.search(r"```bash\n(ripplegraph ui .*)\n```", block)
    server = re.search(r"```nginx\n(.*?)```", block, re.DOTALL)
    assert command and server, "the guide's recipe is between its nginx markers"
    return command.group(1), server.group(1)


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The guide's recipe running: yields the proxy's https URL on loopback."""
    if NGINX is None:
        pytest.skip("reverse proxy test skipped: no nginx (apt-get install nginx-light)")
    root = tmp_path_factory.mktemp("proxy")
    store = root / "store"
    ingest(deployed(store_dir=str(store)), DEMO_NAMESPACE, demo_sessions())
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
         f"/CN={PUBLIC}", "-keyout", str(root / "key.pem"), "-out", str(root / "cert.pem")],
        check=True, capture_output=True,
    )  # fmt: skip
    command, server = recipe()
    ui_port, proxy_port = free_port(), free_port()
    server = (
        server.replace("listen 443 ssl", f"listen 127.0.0.1:{proxy_port} ssl")
        .replace("127.0.0.1:8765", f"127.0.0.1:{ui_port}")
        .replace(f"/etc/ssl/certs/{PUBLIC}.pem", str(root / "cert.pem"))
        .replace(f"/etc/ssl/private/{PUBLIC}.key", str(root / "key.pem"))
    )
    temp = " ".join(
        f"{kind}_temp_path {root / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    (root / "nginx.conf").write_text(
        f"daemon off; pid {root / 'nginx.pid'}; error_log {root / 'error.log'};\n"
        f"events {{}}\nhttp {{ access_log off; {temp}\n{server}\n}}\n"
    )
    args = shlex.split(command.replace('"$RIPPLEGRAPH_UI_TOKEN"', TOKEN))[1:]
    args = [a.replace("8765", str(ui_port)) for a in args] + ["--store", str(store)]
    with serving(args, f"http://127.0.0.1:{ui_port}", root / "ui.log", page=False):
        proxy = subprocess.Popen(
            [NGINX, "-c", str(root / "nginx.conf"), "-p", str(root)],
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            url = f"https://127.0.0.1:{proxy_port}"
            for _ in range(100):
                try:
                    httpx.get(url + "/login", verify=False, headers={"Host": PUBLIC}, timeout=2)
                    break
                except httpx.TransportError:
                    if proxy.poll() is not None:
                        pytest.fail(f"nginx exited: {(root / 'error.log').read_text()}")
                    time.sleep(0.1)
            yield url
        finally:
            proxy.terminate()
            proxy.wait(timeout=30)


def client(url: str, address: str = "127.0.0.1") -> httpx.Client:
    """A client that reaches the proxy from ``address`` and names the public host."""
    return httpx.Client(
        base_url=url,
        verify=False,
        follow_redirects=False,
        headers={"Host": PUBLIC, "Origin": f"https://{PUBLIC}"},
        transport=httpx.HTTPTransport(local_address=address, verify=False),
    )


def test_through_the_proxy_the_browser_signs_in_serves_and_takes_its_forms(proxied: str) -> None:
    with client(proxied) as browser:
        assert browser.get("/").headers["location"] == "/login", "not refused as a foreign host"
        signed = browser.post("/login", data={"token": TOKEN})
        assert signed.status_code == 303
        cookies = signed.headers.get_list("set-cookie")
        assert all("secure" in c.lower() for c in cookies), "https at the proxy: Secure cookies"
        page = browser.get("/namespace", params={"ns": DEMO_NAMESPACE})
        assert page.status_code == 200 and "allergic to seafood" in page.text
        csrf = re.findall(r'name="csrf" value="([^"]+)"', page.text)[0]
        added = browser.post(
            "/add", data={"ns": DEMO_NAMESPACE, "text": "Maya is vegan now.", "csrf": csrf}
        )
        assert added.status_code == 303, added.text
        assert browser.get(added.headers["location"]).status_code == 200


def test_the_throttle_counts_each_real_client_not_what_it_claims(proxied: str) -> None:
    with client(proxied, "127.0.0.2") as guesser:
        spoofed = {"X-Forwarded-For": "10.9.9.9"}
        answers = [
            guesser.post("/login", data={"token": f"guess-{n}"}, headers=spoofed).status_code
            for n in range(8)
        ]
        assert answers[:6] == [403] * 6 and answers[6:] == [429, 429], answers
    with client(proxied, "127.0.0.3") as neighbour:
        assert neighbour.post("/login", data={"token": "typo"}).status_code == 403
        assert neighbour.post("/login", data={"token": TOKEN}).status_code == 303
