"""``ripplegraph ui``: a local browser for what a store remembers, and for correcting it."""

from ripplegraph.agent.surfaces.ui.app import create_app

__all__ = ["create_app"]
