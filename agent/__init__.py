"""The library: graphs, store, LLM call path, policies and surfaces (``ripplegraph`` exports)."""
