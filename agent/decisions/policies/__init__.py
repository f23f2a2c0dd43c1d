"""Offline policies: deterministic, rule-based implementations of every decision.

They make RippleGraph run with no model and no network, and they are the floor a language
model must beat.  Each module implements one decision behind the same interface its LLM role
will use.
"""
