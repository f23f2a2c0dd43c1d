import json
from datetime import datetime
from pathlib import Path

import pytest

from ripplegraph.agent.memory.ingest_files import IngestFileError, load_sessions


def write(tmp_path: Path, payload: object, name: str = "in.json") -> Path:
    path = tmp_path / name
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload))
    return path


def test_documented_format(tmp_path: Path) -> None:
    sessions = load_sessions(
        write(
            tmp_path,
            {
                "sessions": [
                    {
                        "id": "s1",
                        "date": "2024-04-23T19:00:00",
                        "turns": [{"speaker": "Sam", "text": "Try Harbor Grill.", "id": "t1"}],
                    },
                    {"id": "s2", "date": "1:56 pm on 8 May, 2023", "turns": []},
                ]
            },
        )
    )
    assert [s.id for s in sessions] == ["s1", "s2"]
    assert sessions[0].turns[0].speaker == "Sam"
    assert sessions[1].date == datetime(2023, 5, 8, 13, 56)


def test_locomo_format(tmp_path: Path) -> None:
    sample = {
        "sample_id": "conv-1",
        "qa": [],
        "conversation": {
            "speaker_a": "Caroline",
            "speaker_b": "Melanie",
            "session_2_date_time": "1:14 pm on 25 May, 2023",
            "session_2": [{"speaker": "Melanie", "dia_id": "D2:1", "text": "Hi"}],
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel!"},
                {"speaker": "Melanie", "dia_id": "D1:2", "text": "Look", "blip_caption": "a dog"},
            ],
            "session_3_date_time": "7:00 pm on 1 June, 2023",
        },
    }
    sessions = load_sessions(write(tmp_path, [sample]))
    assert [s.id for s in sessions] == ["conv-1/session_1", "conv-1/session_2"]
    assert sessions[0].date == datetime(2023, 5, 8, 13, 56)
    assert sessions[0].turns[1].image_caption == "a dog"
    assert sessions[0].turns[1].id == "D1:2"


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ('{"sessions": [', "invalid JSON at line 1, column 15"),
        (
            {"sessions": [{"id": "s", "turns": [{"text": "no speaker"}]}]},
            "sessions[0].turns[0].speaker: Field required",
        ),
        (
            {"sessions": [{"id": "s", "date": "not a date", "turns": []}]},
            "sessions[0].date: cannot read the date",
        ),
        (
            {"sessions": [{"id": "s", "turns": []}, {"id": "s", "turns": []}]},
            "duplicate session ids: s",
        ),
        ({"nothing": 1}, "expected {'sessions': [...]}"),
        (
            [{"conversation": {"session_1": [{"speaker": "A"}, "oops"]}}],
            "[0].conversation.session_1[1]: expected a turn object",
        ),
    ],
)
def test_bad_files_name_the_problem_and_position(
    tmp_path: Path, payload: object, message: str
) -> None:
    with pytest.raises(IngestFileError) as error:
        load_sessions(write(tmp_path, payload))
    assert message in str(error.value)


def test_wrong_encoding(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes('{"sessions": [{"id": "café"}]}'.encode("latin-1"))
    with pytest.raises(IngestFileError, match="not UTF-8"):
        load_sessions(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(IngestFileError, match="no such file"):
        load_sessions(tmp_path / "absent.json")
