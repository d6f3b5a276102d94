"""The built-in plugins of pi-harness, each registered as a ``pi.plugins`` entry point.

``LOAD_ORDER`` is the one list of the built-ins and their order; pyproject.toml declares
the same entry points in the same order (a test keeps them equal). setuptools writes
entry points sorted by name, so the order is lost on install: discovery loads the
built-ins in this order (any not listed come after, by name, with a warning).
"""

LOAD_ORDER = (
    "app_messages",
    "tools",
    "openai_completions",
    "openai_responses",
    "anthropic_messages",
    "google_generative_ai",
    "model_catalogue",
    "system_prompt",
    "context_files",
    "skills",
    "prompt_templates",
    "compaction",
    "print_mode",
    "rpc_mode",
    "interactive",
    "cli_commands",
)
