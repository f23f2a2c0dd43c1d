"""How fast the command line answers: each verb cold, in a new process, and warm.

Cold is what a person at a terminal waits for: the interpreter, the imports the verb needs,
opening the store and, where the verb embeds, loading the embedding model.  Warm is the same
work again in a process that has paid all of that (the Python API's second call), so the
difference is start-up.  Every run is wall clock on this machine; the table reports medians.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ripplegraph.agent.surfaces.client import Memory

NAMESPACE = "timing"
SAID = "I'm allergic to shellfish, and I play padel on Sundays."
ASKED = "What is the user allergic to?"

COLD: dict[str, tuple[str, ...]] = {
    "--help": ("--help",),
    "list": ("list", "-n", NAMESPACE),
    "add": ("add", "-n", NAMESPACE, SAID),
    "ask": ("ask", ASKED, "-n", NAMESPACE),
}
"""The verbs timed cold, with their arguments (the store is added to each but ``--help``)."""

GOALS_S = {"--help": 0.5, "list": 1.0, "add": 2.5, "ask": 2.5}
"""Issue 44's goals for a cold run, in seconds."""


def command() -> list[str]:
    """How this installation's ``ripplegraph`` is started: its script, else the module."""
    script = Path(sys.executable).parent / "ripplegraph"
    return [str(script)] if script.exists() else [sys.executable, "-m", "ripplegraph.agent.cli"]


def _cold(arguments: Sequence[str], store: Path) -> float:
    """Seconds one run of the command line takes, from start to exit; it must succeed."""
    with_store = [*arguments, "--store", str(store)] if arguments != ("--help",) else arguments
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    started = time.perf_counter()
    done = subprocess.run(
        [*command(), *with_store], capture_output=True, text=True, env=env, check=False
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"ripplegraph {' '.join(arguments)} failed: {done.stderr[-500:]}")
    return seconds


def _timed(call: Callable[[], Any], repeats: int) -> list[float]:
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - started)
    return seconds


def _summary(seconds: list[float], goal: float | None = None) -> dict[str, Any]:
    p50 = statistics.median(seconds)
    return {
        "p50_s": round(p50, 3),
        "min_s": round(min(seconds), 3),
        "runs": len(seconds),
        **({"goal_s": goal, "met": p50 <= goal} if goal is not None else {}),
    }


def run_cli_timings(store: Path, repeats: int, advance: Callable[[], None]) -> dict[str, Any]:
    """Each verb ``repeats`` times cold, then the Python API's calls warm, in ``store``."""
    _cold(COLD["add"], store)  # the store exists before anything is timed
    cold = {}
    for verb, arguments in COLD.items():
        cold[verb] = _summary([_cold(arguments, store) for _ in range(repeats)], GOALS_S[verb])
        advance()
    memory = Memory(store)
    memory.search(ASKED, user_id=NAMESPACE)  # the model is loaded before anything is timed
    warm = {
        "list": _summary(_timed(lambda: memory.get_all(user_id=NAMESPACE), repeats)),
        "add": _summary(_timed(lambda: memory.add(SAID, user_id=NAMESPACE), repeats)),
        "ask": _summary(_timed(lambda: memory.search(ASKED, user_id=NAMESPACE), repeats)),
    }
    advance()
    return {"command": " ".join(command()), "repeats": repeats, "cold": cold, "warm": warm}
