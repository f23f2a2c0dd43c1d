"""A small conversation in Mem-Gallery's published layout, for the loader's and ranker's tests."""

from __future__ import annotations

import json
from pathlib import Path

ROUNDS = [
    ("D1", "2024-06-06", [
        ("I bought a refractor telescope for the balcony.", "Refractors suit planets.", None),
        ("Saturn's rings showed up last night.", "A great first target!", "rings of Saturn"),
        ("My daughter Mia wants to see the Moon too.", "The Moon is easy to find.", None),
    ]),
    ("D2", "2024-06-20", [
        ("The telescope mount wobbles in the wind.", "A heavier tripod would help.", None),
        ("I switched to a reflector after all.", "Reflectors gather more light.", None),
    ]),
]  # fmt: skip


def question(point: str, text: str, clue: list[str], **extra: object) -> dict:
    return {"point": point, "question": text, "answer": "-", "session_id": [], "clue": clue} | extra


QUESTIONS = [
    question("MR", "What did Leo observe with his first telescope?", ["D1:1", "D1:2"]),
    question("FR", "Who wants to see the Moon?", ["D1:3"]),
    question("TR", "Did the wobble come before the switch to a reflector?", ["D2:1", "D2:2"]),
    question("AR", "Did Leo buy a camera?", []),
    question("VS", "Which picture shows Saturn?", ["D1:2"]),
    question("FR", "What is in this picture?", ["D1:2"], question_image=["x.jpg"]),
]


def write_gallery(folder: Path, name: str = "Astronomy") -> Path:
    """One conversation file in ``folder``: Leo and the assistant over two dated sessions."""
    sessions = [
        {
            "session_id": session,
            "date": date,
            "dialogues": [
                {"round": f"{session}:{n}", "user": user, "assistant": reply}
                | ({"image_id": ["i"], "image_caption": [caption]} if caption else {})
                for n, (user, reply, caption) in enumerate(rounds, start=1)
            ],
        }
        for session, date, rounds in ROUNDS
    ]
    conversation = {
        "character_profile": {"name": "Leo", "persona_summary": "an amateur astronomer"},
        "multi_session_dialogues": sessions,
        "human-annotated QAs": QUESTIONS,
    }
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(conversation))
    return folder
