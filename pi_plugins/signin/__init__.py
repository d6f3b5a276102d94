"""Signing in to providers: ``pi auth login PROVIDER`` / ``pi auth logout PROVIDER``
from the shell, ``/login`` and ``/logout`` in the chat (built-in chat commands, as in pi, so RPC's
``get_commands`` does not list them; :mod:`pi_plugins.signin.chat`). An account sign-in (Claude
Pro/Max, ChatGPT Plus/Pro for Codex or for ``openai``, GitHub Copilot, xAI, OpenRouter, Kimi
Code, Meta, Radius) runs its flow (:data:`pi_plugins.signin.flows.SIGN_INS`,
given to auth.json's store through ``register_sign_ins``, which also refreshes them);
any other provider is asked for its API key. Both land in ``<agent dir>/auth.json`` in
pi's shape, so one sign-in serves pi and pi-harness. The modules that do the work load
only when a command runs."""

from pi_core import hookimpl
from pi_core.protocol.shell import CliCommand

#: Sign-ins whose token goes as ``Authorization: Bearer`` where the provider's API key
#: goes as ``x-api-key`` (pi 1.6's Kimi Code ``toAuth``: headers, not an API key).
BEARER_SIGN_INS = frozenset({"kimi-coding"})


@hookimpl
def register_cli_commands():
    return [CliCommand("auth", "pi_plugins.signin.cli:auth_command",
                       "Sign in to a provider, or store or remove its API key")]


@hookimpl
def register_sign_ins(ctx):
    """The built-in sign-ins and one for each models.json Radius gateway (its refresh
    goes to that gateway, as its sign-in did)."""
    from pi_plugins.signin.common import sign_ins

    return list(sign_ins(getattr(ctx, "agent_dir", None)).values())


@hookimpl
def before_provider_headers(headers, model, ctx):
    """A Kimi Code sign-in's token as a bearer token, as pi 1.6 sends it (the provider
    itself sends any key as ``x-api-key``); an API key for it stays as it is."""
    if model.provider not in BEARER_SIGN_INS:
        return None
    registry = ctx.model_registry
    entry = registry.auth.get(model.provider) if registry is not None else None
    key = next((v for k, v in headers.items() if k.lower() == "x-api-key"), None)
    if not entry or entry.get("type") != "oauth" or not key or key != entry.get("access"):
        return None
    return {**headers, "x-api-key": None, "X-Api-Key": None, "authorization": f"Bearer {key}"}
