"""One error root, and the CLI reports every refusal alike: message, exit status 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ripplegraph.agent import cli, errors
from ripplegraph.agent.surfaces import auth


@pytest.mark.parametrize(
    "error",
    [
        errors.StoreError,
        errors.EmbeddingSetupError,
        errors.ChatModelSetupError,
        errors.IngestFileError,
        errors.BudgetSpent,
        errors.ModelUnavailable,
    ],
)
def test_every_error_shares_the_root(error: type[Exception]) -> None:
    assert issubclass(error, errors.RippleGraphError)


@pytest.mark.parametrize(
    "raised", [errors.StoreError("no [bold]store[/bold] at x"), ValueError("bad")]
)
def test_a_refusal_is_its_message_and_exit_status_2(
    raised: Exception, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_: object, **__: object) -> str:
        raise raised

    monkeypatch.setattr(auth, "add_user", refuse)
    result = CliRunner().invoke(
        cli.app, ["users", "add", "maya", "--users-file", str(tmp_path / "u")]
    )
    assert result.exit_code == 2
    assert f"error: {raised}" in result.output  # markup in a message is printed, not styled
    assert "Traceback" not in result.output


def test_a_bug_is_not_dressed_as_a_refusal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: object, **__: object) -> str:
        raise KeyError("bug")

    monkeypatch.setattr(auth, "add_user", broken)
    result = CliRunner().invoke(
        cli.app, ["users", "add", "maya", "--users-file", str(tmp_path / "u")]
    )
    assert result.exit_code == 1 and isinstance(result.exception, KeyError)


def test_pmi_without_an_endpoint_is_a_clear_refusal() -> None:
    from ripplegraph.agent.decisions.causal import PMIScorer
    from ripplegraph.agent.memory import MemoryUnit, Provenance

    def unit(mid: str, text: str) -> MemoryUnit:
        return MemoryUnit(id=mid, namespace="ns", text=text, provenance=Provenance(session_id="s"))

    scorer = PMIScorer("http://127.0.0.1:9/v1", "any")  # the discard port: nothing listens
    with pytest.raises(errors.ModelUnavailable, match="PMI unavailable"):
        scorer.pmi(unit("a", "The puppy is teething."), unit("b", "The puppy chewed a shoe."))
