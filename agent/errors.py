"""Every error RippleGraph raises on purpose, under one root.

An embedding application catches ``RippleGraphError`` to tell a refused request (bad input,
a store opened with another model, a chat model that cannot be created) from a bug; the CLI
reports each one the same way: the message, exit status 2, no traceback.
"""

from __future__ import annotations


class RippleGraphError(Exception):
    """The root: a request RippleGraph refused, with a message that says why."""


class StoreError(RippleGraphError, RuntimeError):
    """The store cannot serve the request as configured (e.g. a different embedding model)."""


class PartUnavailable(StoreError):
    """A server the store keeps its data on (Chroma, PostgreSQL) cannot be reached now.

    Nothing stored is lost: a memory becomes visible only once its rows commit, and a write
    cut short is completed, without duplicates, by running it again.  The store reconnects by
    itself once the server is back.
    """

    def __init__(self, part: str, error: BaseException) -> None:
        reason = " ".join(str(error).split()) or type(error).__name__
        super().__init__(
            f"{part} cannot be reached ({reason[:200]}); nothing stored was lost: run the "
            "same command again once it is back (a write cut short completes without "
            "duplicates)"
        )


class EmbeddingSetupError(RippleGraphError, RuntimeError):
    """The configured embedding model cannot be loaded (missing extra, unknown name)."""


class ChatModelSetupError(RippleGraphError, RuntimeError):
    """The configured chat model cannot be created (unknown provider, missing package)."""


class IngestFileError(RippleGraphError, ValueError):
    """The file cannot be ingested; the message says what and where."""


class ModelUnavailable(RippleGraphError, RuntimeError):
    """An endpoint did not give what a step needs (e.g. no prompt log-probabilities)."""


class BudgetSpent(RippleGraphError, RuntimeError):
    """The next model call would overrun the step's allowance, so it is not made."""


class InvalidValueError(RippleGraphError, ValueError):
    """A value or key the store cannot take (e.g. a namespace too long once written)."""


class NotFoundError(RippleGraphError, LookupError):
    """An id, namespace or store named by the caller holds nothing: nothing was done."""
