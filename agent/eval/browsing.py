"""The memory browser's timings in a namespace: its first page, a filtered page, an ask.

Requests go through the real app in process (Starlette's test client: the app, its
templates and the store, without a socket), so a page's time is the browser's work, not
the network's.  The first page is timed once in a fresh app (templates compiled, every
derived value of the namespace built), then warm, then right after each of a few changes:
a memory added through the browser's own store operation, and forgotten again.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

from ripplegraph.agent.context import Deployed
from ripplegraph.agent.eval.metrics import percentiles
from ripplegraph.agent.services import Services
from ripplegraph.agent.surfaces.api import forget_now
from ripplegraph.agent.surfaces.langgraph_store import RippleGraphStore, add_said

CHANGES = 5
"""Adds, each followed by its forget, after which the first page is timed."""


def time_browser(
    context: Deployed, namespace: str, questions: Sequence[str], pages: int = 20
) -> dict[str, Any]:
    """Milliseconds of the namespace's first page (cold, then warm), a filter, and each ask."""
    from starlette.testclient import TestClient

    from ripplegraph.agent.surfaces.ui import create_app

    client = TestClient(create_app(context), base_url="http://127.0.0.1:8765")

    def timed(query: dict[str, str], path: str = "/namespace") -> tuple[float, int]:
        started = time.perf_counter()
        response = client.get(path + "?" + urlencode({"ns": namespace, **query}))
        elapsed = (time.perf_counter() - started) * 1000
        if response.status_code != 200:
            raise RuntimeError(f"{path} answered {response.status_code}: {response.text[:200]}")
        return elapsed, len(response.content)

    cold, size = timed({})
    warm = [timed({})[0] for _ in range(pages)]
    filtered = [timed({"kind": "standing", "page": "2"})[0] for _ in range(pages)]
    asks = [timed({"q": q}, "/ask") for q in questions]
    items = RippleGraphStore(deployment=context.deployment, context=context)
    after_add, after_forget = [], []
    for index in range(CHANGES):
        key = add_said(items, namespace, f"Note {index}: I now walk to work on Fridays")
        after_add.append(timed({})[0])
        forget_now(context, namespace, memory_ids=_units_of(context, namespace, key))
        after_forget.append(timed({})[0])
    return {
        "first_page_cold_ms": round(cold, 1),
        "first_page_ms": percentiles(warm),
        "after_add_ms": percentiles(after_add),
        "after_forget_ms": percentiles(after_forget),
        "standing_page_ms": percentiles(filtered),
        "ask_ms": percentiles([ms for ms, _ in asks]),
        "largest_page_kb": round(max([size, *(kb for _, kb in asks)]) / 1024, 1),
    }


def _units_of(context: Deployed, namespace: str, key: str) -> list[str]:
    return [
        mid
        for item in Services(context.deployment).store().items(namespace, [key])
        for mid in item.unit_ids
    ]
