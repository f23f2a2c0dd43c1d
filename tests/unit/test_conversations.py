"""REALTALK and Mem-Gallery read as published, beside LoCoMo: dates, turns and gold as written."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from ripplegraph.agent.eval.conversations import (
    LOCOMO,
    MEMGALLERY,
    REALTALK,
    load_conversations,
)
from tests.locomo_sample import write_calvin
from tests.memgallery_sample import write_gallery


def turn(dia_id: str, speaker: str, text: str, when: str, caption: str | None = None) -> dict:
    raw = {
        "clean_text": text,
        "speaker": speaker,
        "date_time": when,
        "img_file": [],
        "dia_id": dia_id,
    }
    return raw | ({"blip_caption": caption, "img_file": ["x.jpg"]} if caption else {})


def qa(question: str, evidence: list[str], category: int) -> dict:
    return {"question": question, "answer": "-", "evidence": evidence, "category": category}


def write_chat(folder: Path) -> Path:
    chat = {
        "name": {"speaker_1": "Emi", "speaker_2": "elise"},
        "session_1": [
            turn("D1:1", "Emi", "I took a cooking class today!", "29.12.2023, 22:42:04"),
            turn("D1:3", "elise", "Here is my dog", "29.12.2023, 22:43:00", "a dog on grass"),
        ],
        "session_1_date_time": "29.12.2023, 22:42:04",
        "events_session_1": {"agent_a": [], "agent_b": []},
        "session_2": [turn("D3:1", "Emi", "Skiing in Colorado next week.", "03.01.2024, 18:13:08")],
        "session_2_date_time": "03.01.2024, 18:13:08",
        "qa": [
            qa("What did Emi do?", ["D1:1", "D3:1"], 1),
            qa("When is the ski trip?", ["D3:1", "D1:2"], 2),
            qa("Would elise like a park?", ["D1:3"], 3),
            qa("Only a dropped turn?", ["D2:7"], 1),
            qa("Adversarial", ["D1:1"], 5),
        ],
    }  # fmt: skip
    (folder / "Chat_1_Emi_Elise.json").write_text(json.dumps(chat))
    return folder


def test_realtalk_is_read_as_published(tmp_path: Path) -> None:
    data = load_conversations([write_chat(tmp_path)])
    (namespace,) = data.sessions
    assert namespace == "Chat_1_Emi_Elise" and data.sets == {namespace: REALTALK}
    first, second = data.sessions[namespace]
    assert second.date == datetime(2024, 1, 3, 18, 13, 8), "day first, not month first"
    assert [t.id for t in first.turns] == ["D1:1", "D1:3"]
    assert first.turns[1].image_caption == "a dog on grass"
    assert [(q.category, q.gold) for q in data.questions] == [
        ("multi-hop", ["D1:1", "D3:1"]),
        ("temporal", ["D3:1"]),
        ("open-domain", ["D1:3"]),
    ]
    assert data.counts["dropped_evidence_ids"] == 2  # D1:2 and D2:7 name dropped turns
    assert data.counts["questions_without_gold"] == 1


def test_both_kinds_load_as_one_dataset(tmp_path: Path) -> None:
    locomo = write_calvin(tmp_path / "locomo.json")
    data = load_conversations([locomo, write_chat(tmp_path)])
    kinds = set(data.sets.values())
    assert kinds == {LOCOMO, REALTALK}
    assert {q.namespace for q in data.questions} == set(data.sessions)
    assert data.counts["conversations"] == len(data.sessions) >= 2


def test_memgallery_is_read_as_published(tmp_path: Path) -> None:
    data = load_conversations([write_gallery(tmp_path / "dialog")])
    assert data.sets == {"Astronomy": MEMGALLERY}
    first, _ = data.sessions["Astronomy"]
    assert first.date == datetime(2024, 6, 6) and first.id == "Astronomy/D1"
    assert [(t.id, t.speaker) for t in first.turns[:2]] == [
        ("D1:1:user", "Leo"),
        ("D1:1:assistant", "assistant"),
    ]
    assert first.turns[2].image_caption == "rings of Saturn"
    assert [(q.category, q.gold) for q in data.questions] == [
        ("multi-hop", ["D1:1:user", "D1:1:assistant", "D1:2:user", "D1:2:assistant"]),
        ("single-hop", ["D1:3:user", "D1:3:assistant"]),
        ("temporal", ["D2:1:user", "D2:1:assistant", "D2:2:user", "D2:2:assistant"]),
    ]
    assert data.left_out == {"AR": 1, "VS": 1, "showing a picture": 1}
    assert data.counts["left_out VS"] == 1


def test_three_kinds_load_as_one_dataset(tmp_path: Path) -> None:
    locomo = write_calvin(tmp_path / "locomo.json")
    data = load_conversations([locomo, write_chat(tmp_path), write_gallery(tmp_path / "dialog")])
    assert set(data.sets.values()) == {LOCOMO, REALTALK, MEMGALLERY}
