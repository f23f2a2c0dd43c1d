"""Purging checkpointed threads that quote forgotten memories, on a real SqliteSaver file."""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

from langgraph.graph import END, START, StateGraph

from ripplegraph.agent.store.erasure import purge_threads
from ripplegraph.agent.surfaces.checkpointing import sqlite_saver


class Quote(TypedDict):
    text: str


def write_threads(path: Path, texts: dict[str, str]) -> None:
    builder = StateGraph(Quote)
    builder.add_node("echo", lambda state: {"text": state["text"] + " (recalled)"})
    builder.add_edge(START, "echo")
    builder.add_edge("echo", END)
    with sqlite_saver(path) as saver:
        graph = builder.compile(checkpointer=saver)
        for thread, text in texts.items():
            graph.invoke({"text": text}, {"configurable": {"thread_id": thread}})


def test_threads_quoting_a_forgotten_memory_are_purged_and_leave_no_bytes(tmp_path: Path) -> None:
    path = tmp_path / "checkpoints.sqlite"
    write_threads(
        path,
        {
            "t-allergy": "m_aaa1: Maya is allergic to peanuts",
            "t-id-only": "see m_aaa1",
            "t-other": "m_bbb2: Tom moved to Porto",
            "t-short": "Yes.",
        },
    )
    purged = purge_threads(path, ["m_aaa1"], ["Maya is allergic to peanuts", "Yes."])
    assert purged == ["t-allergy", "t-id-only"]  # "Yes." is too short to search for
    data = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"allergic to peanuts" not in data and b"m_aaa1" not in data
    assert b"Tom moved to Porto" in data and b"Yes." in data
    assert purge_threads(path, ["m_aaa1"], []) == []
    assert purge_threads(tmp_path / "missing.sqlite", ["m_aaa1"], []) == []
