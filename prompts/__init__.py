"""LLM prompts, one module per role, each beside its pydantic output schema."""
