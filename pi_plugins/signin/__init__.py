"""Signing in to providers: ``pi auth login PROVIDER`` / ``pi auth logout PROVIDER``
from the shell, ``/login`` and ``/logout`` in the chat. A subscription sign-in (Claude
Pro/Max, ChatGPT Plus/Pro, GitHub Copilot) runs its flow (:mod:`pi_core.app.signins`);
any other provider is asked for its API key. Both land in ``<agent dir>/auth.json`` in
pi's shape, so one sign-in serves pi and pi-harness. The modules that do the work load
only when a command runs."""

from pi_core import hookimpl
from pi_core.protocol.commands import Command
from pi_core.protocol.shell import CliCommand


@hookimpl
def register_cli_commands():
    return [CliCommand("auth", "pi_plugins.signin.cli:auth_command",
                       "Sign in to a provider, or store or remove its API key")]


async def _login(args: str, ctx) -> None:
    from pi_plugins.signin.chat import login

    await login(args, ctx)


async def _logout(args: str, ctx) -> None:
    from pi_plugins.signin.chat import logout

    await logout(args, ctx)


@hookimpl
def register_commands(ctx):
    return [
        Command("login", "Sign in with a subscription or store an API key", _login,
                argument_hint="[provider]"),
        Command("logout", "Remove a sign-in or stored API key", _logout, argument_hint="[provider]"),
    ]
