"""``pi auth login PROVIDER [--api-key] [--no-browser]`` and ``pi auth logout PROVIDER``
(pi 1.6's credential commands): sign in or store a key in the terminal, without a
session. The link is printed (and opened in a browser where one can be); the code or
redirect URL may be pasted on standard input, which may also be a pipe (so scripts and
tests can drive it)."""

from __future__ import annotations

import asyncio
import os
import sys
import threading

import click

from pi_plugins.browser import open_browser
from pi_plugins.signin.chat import SUBSCRIPTION_ONLY
from pi_plugins.signin.common import (
    auth_storage,
    display_name,
    known_providers,
    login_options,
    sign_ins,
)
from pi_plugins.signin.flows import LoginCallbacks, SignInError


@click.group("auth", context_settings={"help_option_names": ["-h", "--help"]})
def auth_command() -> None:
    """Sign in to providers, or store their API keys, in <agent dir>/auth.json."""


class _Lines:
    """Lines of standard input read in a daemon thread, so waiting for one can race the
    browser's callback and never keeps the process alive."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue = asyncio.Queue()
        threading.Thread(target=self._read, daemon=True, name="pi-auth-stdin").start()

    def _read(self) -> None:
        for line in sys.stdin:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, line.rstrip("\r\n"))
        self.loop.call_soon_threadsafe(self.queue.put_nowait, None)

    async def next(self) -> str:
        line = await self.queue.get()
        if line is None:
            raise SignInError("Login cancelled: standard input ended")
        return line


def _say(text: str) -> None:
    click.echo(text, err=True)


async def _sign_in(provider: str, browser: bool) -> None:
    flow = sign_ins()[provider]
    lines = _Lines()

    def on_auth(url: str, instructions: str | None) -> None:
        _say(f"Open this URL to sign in:\n  {url}")  # pi 1.6's words
        if instructions:
            _say(instructions)
        if browser:
            open_browser(url)

    async def prompt(message: str, placeholder: str | None, allow_empty: bool) -> str:
        if allow_empty:
            _say(message + (f" ({placeholder})" if placeholder else ""))
        else:  # pi 1.6's question: "MESSAGE (PLACEHOLDER): "
            _say(f"{message}{f' ({placeholder})' if placeholder else ''}: ")
        while True:
            line = (await lines.next()).strip()
            if line or allow_empty:
                return line

    async def manual_code() -> str:
        _say("Paste the redirect URL here, or complete the sign-in in the browser:")
        while True:
            line = (await lines.next()).strip()
            if line:
                return line

    async def select(message: str, options: list[tuple[str, str]]) -> str:
        """pi 1.6's rule: the browser's way (the first) unless ``--no-browser``; then the
        other way, asked for by number only when there are several."""
        first, *others = options
        if browser or not others:
            if others:
                _say(f'To use "{others[0][1]}" instead, run "pi auth login {provider} --no-browser"')
            return first[0]
        if len(others) == 1:
            _say(f"{message} {others[0][1]}")
            return others[0][0]
        _say(message)
        for number, (_, label) in enumerate(others, 1):
            _say(f"  {number}. {label}")
        while True:
            answer = (await lines.next()).strip()
            if answer.isdigit() and 1 <= int(answer) <= len(others):
                return others[int(answer) - 1][0]
            _say(f"Enter a number from 1 to {len(others)}.")

    def device_code(url: str, code: str) -> None:
        _say(f"Open {url} and enter code: {code}")
        if browser:
            open_browser(url)
        _say("Waiting for authentication...")

    callbacks = LoginCallbacks(on_auth=on_auth, prompt=prompt, progress=_say,
                               manual_code=manual_code if flow.uses_callback_server else None,
                               select=select, device_code=device_code)
    store = auth_storage()
    await store.login(provider, callbacks, **login_options(provider))
    _say(f"Logged in to {flow.name}. Credentials saved to {store.path}")
    await refresh_catalogue(provider, flow.name)
    if provider == "radius":  # pi 1.6 adds the Radius MCP server without asking here
        import os

        from pi_plugins.signin.radius_mcp import configure

        configure(provider, flow.name, store.path.parent, os.getcwd(), _say)


async def refresh_catalogue(provider: str, name: str) -> None:
    """pi 1.6 fetches the signed-in provider's catalogue at once (a catalogue that needs
    the key is empty until then), for up to 15 s; the sign-in is saved whatever happens."""
    from pi_core.paths import agent_dir
    from pi_plugins.providers.catalogue_refresh import TIMED_OUT, refresh

    try:
        failures = await refresh(agent_dir(), os.environ, providers=[provider])
    except asyncio.CancelledError:
        _say(f"Skipped the {name} model catalog refresh; pi refreshes it on next start.")
        return
    except Exception as exc:  # noqa: BLE001 (the sign-in is saved; the refresh only says why)
        _say(f"The {name} model catalog could not be refreshed: {exc}")
        return
    if failures == [TIMED_OUT]:
        _say(f"The {name} model catalog refresh timed out; pi refreshes it on next start.")
    elif failures:
        _say(f"The {name} model catalog could not be refreshed; pi retries on next start.")


def _read_key() -> str:
    if sys.stdin.isatty():
        import getpass

        return getpass.getpass("Enter API key: ").strip()
    _say("Enter API key:")
    return sys.stdin.readline().strip()


@auth_command.command("login")
@click.argument("provider")
@click.option("--api-key", "use_key", is_flag=True, help="Store an API key instead of signing in with an account.")
@click.option("--no-browser", is_flag=True, help="Do not open a browser: sign in by device code where the provider has one, else print the link and paste the code.")
def login_command(provider: str, use_key: bool, no_browser: bool) -> None:
    """Sign in to PROVIDER with an account (anthropic, openai, openai-codex, github-copilot,
    xai, openrouter, kimi-coding, meta, radius) or store its API key (--api-key).

    The browser's way is taken; --no-browser takes the other (a device code) where there
    is one. Providers without an account sign-in are asked for an API key, read without
    echoing it."""
    if use_key and no_browser:
        raise click.UsageError("--no-browser is for signing in with an account, not with --api-key")
    known = known_providers()
    if provider not in known:  # pi 1.6's words and exit status
        _say(f'Unknown provider "{provider}".')
        _say(f"Providers: {', '.join(known)}")
        sys.exit(1)
    if use_key and provider in SUBSCRIPTION_ONLY:
        _say(f"{display_name(provider)} has no API key login. Omit --api-key to sign in.")
        sys.exit(1)
    if provider in sign_ins() and not use_key:
        try:
            asyncio.run(_sign_in(provider, browser=not no_browser))
        except (SignInError, OSError, ValueError) as exc:
            _say(f"Failed to login to {display_name(provider)}: {exc}")
            sys.exit(1)
        except KeyboardInterrupt:
            _say("Login cancelled")
            sys.exit(130)
        return
    key = _read_key()
    if not key:
        _say(f"Failed to save API key for {provider}: API key cannot be empty.")
        sys.exit(1)
    store = auth_storage()
    store.set_api_key(provider, key)
    _say(f"Saved API key for {provider}. Credentials saved to {store.path}")
    try:
        asyncio.run(refresh_catalogue(provider, display_name(provider)))
    except KeyboardInterrupt:
        _say(f"Skipped the {display_name(provider)} model catalog refresh; pi refreshes it on next start.")


@auth_command.command("logout")
@click.argument("provider")
def logout_command(provider: str) -> None:
    """Remove what `pi auth login` or /login stored for PROVIDER. Environment variables
    and models.json are unchanged; nothing stored is not an error."""
    store = auth_storage()
    entry = store.get(provider)
    if not store.remove(provider):
        _say(f"No stored credentials for {provider}. Environment variables and models.json config are unchanged.")
        return
    if entry and entry.get("type") == "oauth":
        _say(f"Logged out of {display_name(provider)}")
    else:
        _say(f"Removed stored API key for {provider}. Environment variables and models.json config are unchanged.")


def _add_credential_commands() -> None:
    """``check``, ``print-api-key``, ``print-bearer-token`` (:mod:`.credentials`)."""
    from pi_plugins.signin.credentials import COMMANDS

    for command in COMMANDS:
        auth_command.add_command(command)


_add_credential_commands()
