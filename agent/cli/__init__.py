"""``ripplegraph``, the command line: one module per group of verbs, wired on one app.

``app`` (in ``app``) holds the help layout, the refusals and the options every verb shares;
importing a group's module adds its verbs to it.
"""

from ripplegraph.agent.cli import bench, bench_load, maintain, memory, recall, serve
from ripplegraph.agent.cli.app import app

__all__ = ["app", "bench", "bench_load", "maintain", "memory", "recall", "serve"]
