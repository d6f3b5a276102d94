"""The built-in plugins of pi-harness, each registered as a ``pi.plugins`` entry point.

setuptools writes entry points sorted by name, so their declared order is lost on
install; ``LOAD_ORDER`` keeps it. Discovery loads the built-ins in this order (any not
listed come after, by name).
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
    "acp_mode",
    "interactive",
)
