"""Many users in one deployment: the store as the number of namespaces grows.

Each user is one namespace of M memories.  A few template users are ingested for real (texts
drawn from the pool); the others are copies of a template under fresh ids
(``MemoryStore.clone_namespace``: rows, vectors and edges copied, nothing embedded again), so
20,000 users take minutes.  At each size a fresh process opens the store, as a restarted
server would, and measures: the open, the model load and the first recall (the cold start);
adds and recalls on random users; the first page of namespaces; forgetting one user whole;
its resident memory.  The parent measures the files and bytes the store keeps.
"""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from ripplegraph.agent.context import Deployed, Deployment
from ripplegraph.agent.eval.metrics import percentiles
from ripplegraph.agent.eval.pool import question, sentence
from ripplegraph.agent.eval.report import _pyplot, _row
from ripplegraph.agent.eval.scale import resident_mb
from ripplegraph.agent.graph import ingest_graph
from ripplegraph.agent.memory import Session, Turn
from ripplegraph.agent.services import Services
from ripplegraph.agent.state import IngestInput

TEMPLATES = 40
"""Users ingested for real; every other user copies one of them."""
VECTOR_BYTES = 384 * 4
"""What one MiniLM vector needs as float32."""


def user(index: int) -> str:
    """The namespace of the ``index``-th user."""
    return f"user{index:06d}"


def _templates(context: Deployed, memories: int, rng: random.Random) -> list[str]:
    names = [f"template{i:02d}" for i in range(TEMPLATES)]
    for name in names:
        turns = [Turn(speaker="User", text=sentence(rng), id=f"t{i}") for i in range(memories)]
        session = Session(id=f"{name}/s1", date=datetime(2024, 5, 1, 10), turns=turns)
        ingest_graph.invoke(IngestInput(namespace=name, sessions=[session]), context=context)
    return names


def _grow(context: Deployed, templates: Sequence[str], start: int, size: int) -> float:
    """Copy templates into users ``start``..``size - 1``; seconds per user."""
    store = Services(context.deployment).store()
    began = time.perf_counter()
    for index in range(start, size):
        store.clone_namespace(templates[index % len(templates)], user(index))
    return (time.perf_counter() - began) / max(1, size - start)


def disk(context: Deployed) -> dict[str, Any]:
    """Files and bytes under the store, and the database's size when it is on a server."""
    files = [p for p in Path(context.deployment.store_dir).rglob("*") if p.is_file()]
    found: dict[str, Any] = {"files": len(files), "bytes": sum(p.stat().st_size for p in files)}
    url = context.deployment.database_url
    if url:
        import psycopg

        with psycopg.connect(url) as db:
            row = db.execute("SELECT pg_database_size(current_database())").fetchone()
        found["database_bytes"] = int(row[0]) if row else 0
    return found


def probe(deployment: Deployment, users: int, samples: int, memories: int) -> dict[str, Any]:
    """In a fresh process: the cold start, then adds, recalls, a listing and a forget."""
    from ripplegraph import Memory

    rng = random.Random(users)
    began = time.perf_counter()
    memory = Memory(deployment=deployment)
    opened = time.perf_counter() - began
    began = time.perf_counter()
    memory.store.memory.embedder.query("a first question loads the model")
    model = time.perf_counter() - began
    began = time.perf_counter()
    memory.search(question(rng), user_id=user(rng.randrange(users)))
    first = time.perf_counter() - began
    adds, recalls = [], []
    for _ in range(samples):
        began = time.perf_counter()
        memory.add(sentence(rng), user_id=user(rng.randrange(users)))
        adds.append((time.perf_counter() - began) * 1000)
        began = time.perf_counter()
        memory.search(question(rng), user_id=user(rng.randrange(users)))
        recalls.append((time.perf_counter() - began) * 1000)
    began = time.perf_counter()
    page = memory.store.memory.holding_namespaces(limit=100)
    listing = (time.perf_counter() - began) * 1000
    for _ in range(memories):
        memory.add(sentence(rng), user_id="leaving")
    began = time.perf_counter()
    memory.delete_all(user_id="leaving")
    forget = (time.perf_counter() - began) * 1000
    return {
        "open_s": round(opened, 3),
        "model_load_s": round(model, 3),
        "first_recall_s": round(first, 3),
        "cold_start_s": round(opened + model + first, 3),
        "cold_start_without_model_s": round(opened + first, 3),
        "add_ms": percentiles(adds),
        "recall_ms": percentiles(recalls),
        "namespaces_page_ms": round(listing, 1),
        "namespaces_page_size": len(page),
        "forget_user_ms": round(forget, 1),
        "rss_mb": resident_mb(),
    }


def _probed(context: Deployed, users: int, samples: int, memories: int) -> dict[str, Any]:
    """``probe`` in a child process (a cold open of the store, as a restarted server's)."""
    request = json.dumps(
        {
            "deployment": context.deployment.model_dump(mode="json"),
            "users": users,
            "samples": samples,
            "memories": memories,
        }
    )
    done = subprocess.run(
        [sys.executable, "-m", "ripplegraph.agent.eval.tenants"],
        input=request,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def run_tenants(
    context: Deployed,
    sizes: Sequence[int],
    memories: int = 10,
    samples: int = 100,
    advance: Callable[[], None] = lambda: None,
    seed: int = 0,
) -> dict[str, Any]:
    """Grow the users through ``sizes`` (ascending), measuring the store at each."""
    rng = random.Random(seed)
    started = time.perf_counter()
    templates = _templates(context, memories, rng)
    results: dict[str, Any] = {
        "memories_per_user": memories,
        "backend": {
            "vectors": "chroma-server" if context.deployment.chroma_url else "embedded",
            "relational": "postgresql" if context.deployment.database_url else "sqlite",
            "collection_threshold": Services(context.deployment).store().vectors.threshold,
        },
        "sizes": {},
    }
    grown = added = 0
    for size in sorted(sizes):
        per_user = _grow(context, templates, grown, size)
        grown = size
        measured = _probed(context, size, samples, memories)
        added += samples  # the probe's adds stay; its leaving user is forgotten
        units = (len(templates) + size) * memories + added
        text = statistics.mean(
            len(u.text.encode()) for u in Services(context.deployment).store().all_units(user(0))
        )
        stored = disk(context)
        total = stored["bytes"] + stored.get("database_bytes", 0)
        measured.update(
            users=size,
            grow_ms_per_user=round(per_user * 1000, 2),
            **stored,
            bytes_per_memory_beyond_text_and_vector=round(total / units - text - VECTOR_BYTES, 1),
        )
        results["sizes"][str(size)] = measured
        advance()
    results["seconds"] = round(time.perf_counter() - started, 1)
    return results


def tenants_markdown(results: dict[str, Any]) -> str:
    """Per number of users: memory, disk, add and recall, listing, forget, cold start."""
    backend = results["backend"]
    header = ["users", "RSS MB", "files", "disk MB", "B/memory beyond text+vector",
              "add p50 / p95 ms", "recall p50 / p95 ms", "namespaces page ms",
              "forget a user ms", "cold start s (without model)"]  # fmt: skip
    lines = [
        f"{results['memories_per_user']} memories per user; {backend['vectors']} Chroma with "
        f"{backend['relational']} (collection threshold {backend['collection_threshold']}).",
        "",
        _row(header),
        _row(["---"] * len(header)),
    ]
    for size in results["sizes"].values():
        megabytes = (size["bytes"] + size.get("database_bytes", 0)) / 2**20
        lines.append(
            _row(
                [
                    str(size["users"]),
                    f"{size['rss_mb']:.0f}",
                    str(size["files"]),
                    f"{megabytes:.1f}",
                    f"{size['bytes_per_memory_beyond_text_and_vector']:.0f}",
                    f"{size['add_ms']['p50']:.1f} / {size['add_ms']['p95']:.1f}",
                    f"{size['recall_ms']['p50']:.1f} / {size['recall_ms']['p95']:.1f}",
                    f"{size['namespaces_page_ms']:.1f}",
                    f"{size['forget_user_ms']:.1f}",
                    f"{size['cold_start_s']:.2f} ({size['cold_start_without_model_s']:.2f})",
                ]
            )
        )
    lines += [
        "",
        "Each size is measured in a fresh process that opens the store; the cold start is "
        "the open, the model load and the first recall (in brackets, without the model load). "
        "Disk counts every file under the store, and the database when it is on a server.",
    ]
    return "\n".join(lines)


def tenants_chart(results: dict[str, Any], path: Path) -> None:
    """Resident memory and add/recall medians against the number of users."""
    plt = _pyplot()
    sizes = list(results["sizes"].values())
    users = [s["users"] for s in sizes]
    figure, (memory, latency) = plt.subplots(1, 2, figsize=(9, 4))
    memory.plot(users, [s["rss_mb"] for s in sizes], marker="o", color="black")
    memory.set_xscale("log")
    memory.set_xlabel("users")
    memory.set_ylabel("RSS MB")
    memory.set_title("Resident memory")
    for key, label in (("add_ms", "add p50"), ("recall_ms", "recall p50")):
        latency.plot(users, [s[key]["p50"] for s in sizes], marker="o", label=label)
    latency.set_xscale("log")
    latency.set_xlabel("users")
    latency.set_ylabel("ms")
    latency.set_title("Latency")
    latency.legend()
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)


if __name__ == "__main__":  # the child process of ``_probed``
    asked = json.loads(sys.stdin.read())
    measured = probe(
        Deployment.model_validate(asked["deployment"]),
        asked["users"],
        asked["samples"],
        asked["memories"],
    )
    sys.stdout.write(json.dumps(measured) + "\n")
