"""``ripplegraph`` and ``python -m ripplegraph``: the command line, Ctrl-C included.

Ctrl-C is one line, ``error: interrupted``, and exit status 130, from the moment this entry
point runs: while the command line loads as while a command runs.  Some libraries turn the
interrupt into an error of their own (pydantic building a model while Ctrl-C arrives raises
a ``SchemaError``), so the interrupt is remembered when it arrives, not read off the error.
Once the command is over, the interpreter's own exit (closing the store, its timers) is not
interrupted half-way.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

_interrupted = False


def _interrupt(signum: int, frame: FrameType | None) -> None:
    global _interrupted
    _interrupted = True
    raise KeyboardInterrupt


def main() -> None:
    """Run the command line; exit with its status."""
    signal.signal(signal.SIGINT, _interrupt)
    try:
        from ripplegraph.agent.cli import app

        app()
    except SystemExit:
        raise
    except BaseException:
        if not _interrupted:
            raise
        sys.stderr.write("error: interrupted\n")
        sys.exit(130)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


if __name__ == "__main__":
    main()
