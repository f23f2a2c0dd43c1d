"""A tiny LoCoMo-format conversation (Calvin's March purchases) shared by the CLI tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def calvin_sample() -> list[dict[str, Any]]:
    """One conversation, two sessions, five turns, two answerable questions and one adversarial."""
    return [
        {
            "sample_id": "conv-x",
            "conversation": {
                "speaker_a": "Calvin",
                "speaker_b": "Dave",
                "session_1_date_time": "2:00 pm on 3 March, 2023",
                "session_1": [
                    {"speaker": "Calvin", "dia_id": "D1:1", "text": "I bought a mansion in Japan!"},
                    {"speaker": "Dave", "dia_id": "D1:2", "text": "Wow, congratulations Calvin."},
                    {"speaker": "Calvin", "dia_id": "D1:3", "text": "We also adopted a puppy."},
                ],
                "session_2_date_time": "5:00 pm on 20 March, 2023",
                "session_2": [
                    {"speaker": "Calvin", "dia_id": "D2:1", "text": "Last week I got a new car."},
                    {"speaker": "Dave", "dia_id": "D2:2", "text": "You had a big March, Calvin!"},
                ],
            },
            "qa": [
                {"question": "What did Calvin buy in March 2023?", "answer": "a mansion and a car",
                 "evidence": ["D1:1; D2:1"], "category": 1},
                {"question": "Where is Calvin's mansion?", "answer": "Japan",
                 "evidence": ["D1:1", "D9:99"], "category": 4},
                {"question": "Adversarial?", "evidence": [], "category": 5},
            ],
        }
    ]  # fmt: skip


def write_calvin(path: Path, sample: list[dict[str, Any]] | None = None) -> Path:
    """Write the sample (or a modified copy) as JSON at ``path``."""
    path.write_text(json.dumps(sample if sample is not None else calvin_sample()))
    return path
