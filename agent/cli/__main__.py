"""``python -m ripplegraph.agent.cli``: the same command line as ``ripplegraph``."""

from ripplegraph.agent.cli import app

app()
