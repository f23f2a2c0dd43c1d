"""What a results file says it ran with, and the pins that make it reproducible."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

from ripplegraph.agent.eval.runs import RANKING_LIBRARIES, environment

ROOT = Path(__file__).resolve().parents[2]


def test_a_run_names_the_versions_of_what_its_rankings_depend_on() -> None:
    found = environment()
    assert list(found["libraries"]) == list(RANKING_LIBRARIES)
    assert found["libraries"]["numpy"] == version("numpy")
    assert found["cpus"] and found["machine"] and found["python"].startswith("3.")


def test_the_constraints_pin_every_library_a_run_names() -> None:
    text = (ROOT / "constraints.txt").read_text()
    pinned = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)$", text, flags=re.MULTILINE))
    assert set(RANKING_LIBRARIES) <= set(pinned), set(RANKING_LIBRARIES) - set(pinned)
    installed = environment()["libraries"]
    assert {name: pinned[name] for name in RANKING_LIBRARIES} == installed, "install as pinned"
