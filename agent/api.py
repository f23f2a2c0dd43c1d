"""Moved to ``ripplegraph.agent.surfaces.api`` (issue 45's regroup); this alias goes in 0.2.

The documentation named ``ripplegraph.agent.api.remember``, ``recall`` and ``answer``, so code
that imported them keeps working, with a ``DeprecationWarning`` naming the new home.
"""

import warnings

from ripplegraph.agent.surfaces.api import answer, recall, remember

__all__ = ["answer", "recall", "remember"]

warnings.warn(
    "ripplegraph.agent.api moved to ripplegraph.agent.surfaces.api; the old name goes in 0.2",
    DeprecationWarning,
    stacklevel=2,
)
