"""`ripplegraph ingest` end to end: JSON summary, idempotence, bad files change nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ripplegraph.agent.cli import app
from tests.locomo_sample import calvin_sample, write_calvin

pytestmark = pytest.mark.integration
LOCOMO_DEV = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo" / "locomo_dev.json"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def last_json(output: str) -> dict:
    return json.loads(output.strip().splitlines()[-1])


def test_ingest_json_summary_and_idempotence(tmp_path: Path) -> None:
    data = write_calvin(tmp_path / "sample.json")
    store = str(tmp_path / "store")
    code, output = run("ingest", str(data), "--namespace", "calvin", "--store", store, "--json")
    assert code == 0, output
    first = last_json(output)
    assert first["units"] == 5 and first["new_units"] == 5
    assert set(first["edges"]) == {"semantic", "structural"}
    assert first["edges"]["structural"] > 0
    assert first["seconds"] > 0
    code, output = run("ingest", str(data), "--namespace", "calvin", "--store", store, "--json")
    again = last_json(output)
    assert again["new_units"] == 0
    assert (again["units"], again["edges"]) == (first["units"], first["edges"])


def test_bad_file_is_one_clear_error_and_writes_nothing(tmp_path: Path) -> None:
    good = write_calvin(tmp_path / "good.json")
    store = str(tmp_path / "store")
    run("ingest", str(good), "--namespace", "calvin", "--store", store, "--json")
    bad = tmp_path / "bad.json"
    broken = calvin_sample()
    broken[0]["conversation"]["session_3"] = [{"speaker": "Calvin", "text": "new"}, 7]
    bad.write_text(json.dumps(broken))
    code, output = run("ingest", str(bad), "--namespace", "calvin", "--store", store, "--json")
    assert code == 2
    assert "session_3[1]: expected a turn object" in output
    code, output = run("ingest", str(good), "--namespace", "calvin", "--store", store, "--json")
    assert last_json(output)["units"] == 5


@pytest.mark.skipif(not LOCOMO_DEV.exists(), reason="LoCoMo dev data not beside the checkout")
def test_locomo_dev_ingest(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    args = ("ingest", str(LOCOMO_DEV), "--namespace", "locomo", "--store", store, "--json")
    code, output = run(*args)
    assert code == 0, output
    first = last_json(output)
    assert first["units"] == first["new_units"] == 2760
    assert first["edges"]["semantic"] > 1000 and first["edges"]["structural"] > 1000
    code, output = run(*args)
    again = last_json(output)
    assert again["new_units"] == 0
    assert (again["units"], again["edges"]) == (first["units"], first["edges"])
