"""Endurance: many users' memories under a steady mixed load, through ``RippleGraphStore``.

The path LangGraph servers and LangMem take.  Each of U users first holds M memories (one put
each); then operations arrive at a fixed rate for the given time, drawn from a fixed mix: a
new put (a third of them with a time to live, which later expire and are swept), a put on an
existing key (an update: its memory is forgotten and the new one remembered), a delete and a
search (a recall).  Texts are drawn from a pool of sentences (``agent.eval.pool``), so each
distinct text is embedded once and the model does not dominate the run.  Measured: resident
memory over time (its slope after the warm-up tenth, in MB per 1,000 operations), each
operation's p50/p95 in the first and the last tenth of the run, errors, ``check`` at the end,
and whether any file still holds a forgotten memory's id (or a forgotten text no live memory
shares) once the erasure window is closed.
"""

from __future__ import annotations

import random
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from langgraph.store.base import PutOp

from ripplegraph.agent.context import Deployed
from ripplegraph.agent.eval.metrics import percentiles
from ripplegraph.agent.eval.pool import question, sentence, sentences_in
from ripplegraph.agent.eval.report import _pyplot, _row
from ripplegraph.agent.eval.scale import resident_mb
from ripplegraph.agent.memory.items import namespace_of
from ripplegraph.agent.services import Services
from ripplegraph.agent.surfaces.langgraph_store import RippleGraphStore

MIX = {"search": 0.35, "put": 0.30, "update": 0.15, "delete": 0.20}
"""Each operation's share of the load; deletes, updates and expiries keep the users' sizes."""
TTL_SHARE = 1 / 3
"""Share of new puts that carry a time to live."""
_MEMORY_ID = re.compile(rb"m_[0-9a-f]{32}")


@dataclass(frozen=True)
class SoakPlan:
    """The load: how many users, how much each holds, for how long, how fast."""

    users: int = 100
    memories: int = 200
    minutes: float = 30.0
    rate: float = 10.0
    ttl_minutes: float = 2.0
    seed: int = 0


@dataclass
class _Users:
    """What the load generator knows of each user: keys it may update or delete."""

    keys: dict[str, list[str]]
    forgotten: dict[str, str]  # memory id → text, of every memory the load forgot
    expiring: dict[tuple[str, str], dict[str, str]]  # (user, key) → its memories' texts

    def pick(self, rng: random.Random, user: str) -> str | None:
        keys = self.keys[user]
        return keys.pop(rng.randrange(len(keys))) if keys else None


def _preload(store: RippleGraphStore, plan: SoakPlan, rng: random.Random, users: _Users) -> None:
    for index in range(plan.users):
        user = f"user{index:05d}"
        keys = [uuid.uuid4().hex for _ in range(plan.memories)]
        store.batch([PutOp((user,), k, {"text": sentence(rng)}) for k in keys])
        users.keys[user] = keys


def _operate(
    store: RippleGraphStore, kind: str, user: str, rng: random.Random, users: _Users, ttl: float
) -> str:
    """Run one operation of ``kind`` for ``user``; what it turned out to be."""
    if kind == "search":
        store.search((user,), query=question(rng), limit=5, refresh_ttl=False)
        return kind
    if kind == "put":
        new = uuid.uuid4().hex
        expiring = rng.random() < TTL_SHARE
        store.put((user,), new, {"text": sentence(rng)}, ttl=ttl if expiring else None)
        if expiring:  # left to its time to live; what it remembered, for the byte check
            users.expiring[(user, new)] = _memories(store, user, new)
        else:
            users.keys[user].append(new)
        return kind
    key = users.pick(rng, user)
    if key is None:  # nothing left to change: a new memory instead
        return _operate(store, "put", user, rng, users, ttl)
    _remember_forgotten(store, user, key, users)
    if kind == "update":
        store.put((user,), key, {"text": sentence(rng)})
        users.keys[user].append(key)
    else:
        store.delete((user,), key)
    return kind


def _memories(store: RippleGraphStore, user: str, key: str) -> dict[str, str]:
    """The memories the item ``key`` was made of: id → text."""
    namespace = namespace_of((user,))
    found = store.memory.items(namespace, [key])
    if not found:
        return {}
    units = store.memory.get(namespace, found[0].unit_ids)
    return {mid: unit.text for mid, unit in units.items()}


def _remember_forgotten(store: RippleGraphStore, user: str, key: str, users: _Users) -> None:
    """The memories an update or delete of ``key`` forgets (for the byte check at the end)."""
    users.forgotten.update(_memories(store, user, key))


def _files(context: Deployed) -> list[Path]:
    return Services(context.deployment).store().files()


def _left_behind(context: Deployed, users: _Users) -> int:
    """Forgotten memories whose id, or text no live memory holds, a file still holds.

    Run once the erasure window is closed (``compact``).  Texts are drawn from a pool, so a
    forgotten text that another memory still holds is not looked for.  Each file is read
    once: every memory id and every pool sentence in it is found by pattern, then compared.
    """
    memory = Services(context.deployment).store()
    memory.sweep_expired()
    for (user, key), made in users.expiring.items():
        if not memory.items(namespace_of((user,)), [key]):  # expired and swept
            users.forgotten.update(made)
    memory.compact()
    live = {s for ns in memory.namespaces() for u in memory.all_units(ns)
            for s in sentences_in(u.text.encode())}  # fmt: skip
    texts = {mid: sentences_in(text.encode()) - live for mid, text in users.forgotten.items()}
    left: set[str] = set()
    for path in _files(context):
        data = path.read_bytes()
        ids = {m.decode() for m in _MEMORY_ID.findall(data)}
        found = sentences_in(data)
        left.update(mid for mid in users.forgotten if mid in ids or texts[mid] & found)
    return len(left)


def _slope(points: list[tuple[int, float]]) -> float:
    """Least-squares MB per 1,000 operations."""
    if len(points) < 3:
        return 0.0
    ops, mb = np.array(points, dtype=float).T
    return round(float(np.polyfit(ops, mb, 1)[0]) * 1000, 3)


def run_soak(
    context: Deployed, plan: SoakPlan, advance: Callable[[], None] = lambda: None
) -> dict[str, Any]:
    """Preload the users, run the load for ``plan.minutes``, and measure it."""
    rng = random.Random(plan.seed)
    store = RippleGraphStore(deployment=context.deployment, context=context)
    users = _Users({}, {}, {})
    started = time.perf_counter()
    _preload(store, plan, rng, users)
    preload_s = time.perf_counter() - started
    names = sorted(users.keys)
    kinds, weights = list(MIX), list(MIX.values())
    samples: list[dict[str, Any]] = []
    rss: list[tuple[float, int, float]] = [(0.0, 0, resident_mb())]
    errors: dict[str, int] = {}
    first_error: dict[str, str] = {}
    total = int(plan.minutes * 60 * plan.rate)
    began = time.perf_counter()
    for index in range(total):
        due = began + index / plan.rate
        if (wait := due - time.perf_counter()) > 0:
            time.sleep(wait)
        kind = rng.choices(kinds, weights)[0]
        user = rng.choice(names)
        at = time.perf_counter()
        try:
            done = _operate(store, kind, user, rng, users, plan.ttl_minutes)
        except Exception as error:  # counted, and the load goes on
            name = type(error).__name__
            errors[name] = errors.get(name, 0) + 1
            first_error.setdefault(name, str(error)[:300])
            continue
        samples.append({"t": at - began, "op": done, "ms": (time.perf_counter() - at) * 1000})
        if index % max(1, int(plan.rate * 10)) == 0:  # every ten seconds
            rss.append((time.perf_counter() - began, index + 1, resident_mb()))
            advance()
    rss.append((time.perf_counter() - began, total, resident_mb()))
    seconds = time.perf_counter() - began
    left = _left_behind(context, users)
    report = Services(context.deployment).store().check()
    return {
        "plan": asdict(plan),
        "backend": {
            "vectors": "chroma-server" if context.deployment.chroma_url else "embedded",
            "relational": "postgresql" if context.deployment.database_url else "sqlite",
            "collection_threshold": Services(context.deployment).store().vectors.threshold,
        },
        "preload_s": round(preload_s, 1),
        "seconds": round(seconds, 1),
        "operations": total,
        "achieved_rate": round(len(samples) / seconds, 2) if seconds else 0.0,
        "rss_mb": {"start": rss[0][2], "end": rss[-1][2], "max": max(r[2] for r in rss)},
        "rss_slope_mb_per_1000_ops": _slope([(n, mb) for t, n, mb in rss if t >= seconds / 10]),
        "latency_ms": _tenths(samples, seconds),
        "errors": errors,
        "first_errors": first_error,
        "check": {
            "consistent": report.consistent,
            "problems": report.problems,
            "leftovers": report.leftovers,
        },
        "forgotten_checked": len(users.forgotten),
        "forgotten_left_in_files": left,
        "rss_series": [[round(t, 1), n, mb] for t, n, mb in rss],
        # Every operation's time and latency: for the chart, kept beside the results.
        "details": [[round(s["t"], 2), s["op"], round(s["ms"], 2)] for s in samples],
    }


def _tenths(samples: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    """Each operation's p50/p95 in the first and the last tenth of the run, and their ratio."""
    found: dict[str, Any] = {}
    for kind in MIX:
        first = [s["ms"] for s in samples if s["op"] == kind and s["t"] < seconds / 10]
        last = [s["ms"] for s in samples if s["op"] == kind and s["t"] >= seconds * 0.9]
        early, late = percentiles(first), percentiles(last)
        found[kind] = {
            "count": sum(1 for s in samples if s["op"] == kind),
            "first_tenth": early,
            "last_tenth": late,
            "p95_ratio": round(late["p95"] / early["p95"], 2) if early["p95"] else None,
        }
    return found


def soak_markdown(results: dict[str, Any]) -> str:
    """Per operation, first and last tenth; then memory, errors, check and erasure."""
    plan, backend = results["plan"], results["backend"]
    header = ["operation", "count", "first tenth p50 / p95 ms", "last tenth p50 / p95 ms",
              "p95 last / first"]  # fmt: skip
    lines = [
        f"{plan['users']} users × {plan['memories']} memories, {plan['rate']} operations/s "
        f"for {plan['minutes']} min on {backend['vectors']} Chroma with {backend['relational']} "
        f"(collection threshold {backend['collection_threshold']}); preload "
        f"{results['preload_s']} s, achieved {results['achieved_rate']} operations/s.",
        "",
        _row(header),
        _row(["---"] * len(header)),
    ]
    for kind, row in results["latency_ms"].items():
        first, last = row["first_tenth"], row["last_tenth"]
        lines.append(
            _row(
                [
                    kind,
                    str(row["count"]),
                    f"{first['p50']:.1f} / {first['p95']:.1f}",
                    f"{last['p50']:.1f} / {last['p95']:.1f}",
                    "–" if row["p95_ratio"] is None else f"{row['p95_ratio']:.2f}",
                ]
            )
        )
    rss = results["rss_mb"]
    check = results["check"]
    lines += [
        "",
        f"Resident memory {rss['start']:.0f} → {rss['end']:.0f} MB (max {rss['max']:.0f}); slope "
        f"after the first tenth {results['rss_slope_mb_per_1000_ops']} MB per 1,000 operations.",
        f"Errors: {results['errors'] or 'none'}. check: "
        f"{'consistent' if check['consistent'] else 'INCONSISTENT'}. Forgotten memories whose "
        f"id (or unshared text) a file still holds after the compaction: "
        f"{results['forgotten_left_in_files']} of {results['forgotten_checked']}.",
    ]
    return "\n".join(lines)


def soak_chart(results: dict[str, Any], path: Path) -> None:
    """Resident memory and each operation's latency over the run."""
    plt = _pyplot()
    figure, (memory, latency) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    series = results["rss_series"]
    memory.plot([t / 60 for t, _, _ in series], [mb for _, _, mb in series], color="black")
    memory.set_ylabel("RSS MB")
    memory.set_title("Soak: resident memory and latency over time")
    points = results["details"]
    for kind in MIX:
        chosen = [(t, ms) for t, op, ms in points if op == kind]
        if chosen:
            latency.scatter([t / 60 for t, _ in chosen], [ms for _, ms in chosen], s=2,
                            label=kind)  # fmt: skip
    latency.set_yscale("log")
    latency.set_ylabel("ms")
    latency.set_xlabel("minutes")
    latency.legend(markerscale=4)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
