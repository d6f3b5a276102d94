"""LLM provider plugins, one per wire API."""
