"""Models and the one way to call them.

Embedding and chat providers by name, the local embedding model, and the LLM call path
every role goes through.

This floor sits under the store (which embeds) and over the prompts (whose output schemas the
call path checks); nothing here knows a graph, a node or a stored memory.
"""
