"""Sphinx configuration of RippleGraph's documentation (``make docs``).

Pages are Markdown (MyST); the API reference is autodoc over the installed package, so it
documents what ``import ripplegraph`` gives.  The build runs in the test command with
warnings as errors.
"""

from ripplegraph import __version__

project = "RippleGraph"
author = "RippleGraph's developers"
copyright = "2026, RippleGraph's developers"
release = __version__

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

autodoc_typehints = "description"
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": False}

html_theme = "furo"
html_title = f"RippleGraph {release}"
html_static_path: list[str] = []
