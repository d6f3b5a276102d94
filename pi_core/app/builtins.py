"""The built-in plugins of pi-harness: the one list of them, in load order.

Each line is one plugin: the name ``pi plugins`` shows and ``plugins.disabled`` and
``-builtin:NAME`` take, and the module discovery imports. Adding a built-in is adding its
line here, at the place in the load order where it should load. (They are not entry
points: installed metadata sorts entry points by name, so their order would be lost.)
Names only: the shell imports no plugin.
"""

BUILTINS: dict[str, str] = {
    "app_messages": "pi_plugins.app_messages",
    "local_environment": "pi_plugins.local_environment",
    "tools": "pi_plugins.tools",
    "keys": "pi_plugins.keys",
    "trust": "pi_plugins.trust",
    "subagents": "pi_plugins.subagents",
    "openai_completions": "pi_plugins.providers.openai_completions",
    "openai_responses": "pi_plugins.providers.openai_responses",
    "anthropic_messages": "pi_plugins.providers.anthropic",
    "google_generative_ai": "pi_plugins.providers.google",
    "openai_codex_responses": "pi_plugins.providers.openai_codex",
    "mistral_conversations": "pi_plugins.providers.mistral",
    "azure_openai_responses": "pi_plugins.providers.azure_openai",
    "google_vertex": "pi_plugins.providers.google_vertex",
    "bedrock_converse_stream": "pi_plugins.providers.bedrock",
    "model_catalogue": "pi_plugins.providers.catalogue",
    "local_models": "pi_plugins.providers.local",
    "system_prompt": "pi_plugins.system_prompt",
    "context_files": "pi_plugins.context_files",
    "skills": "pi_plugins.skills",
    "prompt_templates": "pi_plugins.prompt_templates",
    "budget": "pi_plugins.budget",
    "compaction": "pi_plugins.compaction",
    "retries": "pi_plugins.retries",
    "checkpoints": "pi_plugins.checkpoints",
    "print_mode": "pi_plugins.print_mode",
    "rpc_mode": "pi_plugins.rpc",
    "acp_mode": "pi_plugins.acp",
    "interactive": "pi_plugins.interactive",
    "cli_commands": "pi_plugins.cli_commands",
    "packages": "pi_plugins.packages",
    "signin": "pi_plugins.signin",
    "batch": "pi_plugins.batch",
    "serve": "pi_plugins.serve",
    "telemetry": "pi_plugins.telemetry",
}
