"""Decisions: what a node asks, answered by an offline policy or an LLM role.

The offline policies, the LLM roles that take their place when a model is configured, and
the write path's edge decisions (typed links, fact clusters, causal edges).

A node calls one decision and does not know which kind answered.  Decisions read the store
and the graph state; they never import a node, the wiring or a surface.
"""
