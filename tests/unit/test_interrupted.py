"""A Ctrl-C that a native module's import reports as an ImportError is still an interrupt."""

from __future__ import annotations

from ripplegraph.agent.surfaces.langgraph_store import interrupted


def _raised_from(cause: BaseException | None) -> ImportError:
    try:
        raise ImportError("initialization failed") from cause
    except ImportError as error:
        return error


def test_an_import_error_raised_from_ctrl_c_is_an_interrupt() -> None:
    assert interrupted(_raised_from(KeyboardInterrupt()))
    assert interrupted(KeyboardInterrupt())


def test_other_errors_are_not() -> None:
    assert not interrupted(_raised_from(None))
    assert not interrupted(_raised_from(ValueError("bad value")))
