"""The built-in plugins of pi-harness by entry-point name, in load order: the one list.

pyproject.toml declares the same ``pi.plugins`` entry points in the same order (a test
keeps them equal); installed metadata sorts entry points by name, so discovery orders
the built-ins by this list. Names only: the shell imports no plugin.
"""

LOAD_ORDER = (
    "app_messages",
    "local_environment",
    "tools",
    "keys",
    "trust",
    "subagents",
    "openai_completions",
    "openai_responses",
    "anthropic_messages",
    "google_generative_ai",
    "openai_codex_responses",
    "mistral_conversations",
    "azure_openai_responses",
    "google_vertex",
    "bedrock_converse_stream",
    "model_catalogue",
    "local_models",
    "system_prompt",
    "context_files",
    "skills",
    "prompt_templates",
    "budget",
    "compaction",
    "retries",
    "checkpoints",
    "print_mode",
    "rpc_mode",
    "acp_mode",
    "interactive",
    "cli_commands",
    "packages",
    "signin",
    "batch",
    "serve",
    "telemetry",
)
