"""The built-in plugins of pi-harness, each registered as a ``pi.plugins`` entry point.

setuptools writes entry points sorted by name, so their declared order is lost on
install; ``LOAD_ORDER`` keeps it. Discovery loads the built-ins in this order (any not
listed come after, by name).
"""

LOAD_ORDER = (
    "app_messages",
    "local_environment",
    "tools",
    "subagents",
    "openai_completions",
    "openai_responses",
    "anthropic_messages",
    "google_generative_ai",
    "model_catalogue",
    "local_models",
    "system_prompt",
    "context_files",
    "skills",
    "prompt_templates",
    "compaction",
    "checkpoints",
    "print_mode",
    "rpc_mode",
    "interactive",
)
