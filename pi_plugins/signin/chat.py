"""``/login`` and ``/logout`` in the chat, through the plugin's ``ctx.ui`` dialogs: pick
how (a subscription or an API key) and which provider, then the flow; the link is shown
(and opened where a browser can be), the redirect URL or code may be pasted."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable

from pi_core.protocol.model import is_unknown
from pi_plugins.browser import open_browser
from pi_plugins.models.default_models import DEFAULT_MODEL_PER_PROVIDER
from pi_plugins.signin.common import (
    auth_storage,
    display_name,
    known_providers,
    login_options,
    method_labels,
    sign_ins,
)
from pi_plugins.signin.flows import LoginCallbacks, SignInError

#: pi 1.6's ways in, as its /login offers them (Radius's last, straight to its sign-in).
SUBSCRIPTION = "Sign in with an account"
API_KEY = "Sign in with an API key"
RADIUS = "Sign in with Radius"
#: Providers that have no API key of their own: only their sign-in serves them.
SUBSCRIPTION_ONLY = ("openai-codex", "github-copilot")


def _choice_label(provider: str, flows: dict) -> str:
    flow = flows.get(provider)
    return f"{flow.name} [{provider}]" if flow else provider


def _from_label(label: str | None) -> str | None:
    if label is None:
        return None
    return label.rsplit("[", 1)[1].rstrip("]") if label.endswith("]") else label


async def login(args: str, ctx) -> None:
    ui = ctx.ui
    store = auth_storage(ctx.agent_dir)
    provider = args.strip() or None
    use_key = False
    flows = sign_ins(ctx.agent_dir)  # the built-in ones and models.json's Radius gateways
    if provider is None:
        how = await ui.select("Select authentication method:", [SUBSCRIPTION, API_KEY, RADIUS])
        if how is None:
            return
        use_key = how == API_KEY
        if how == RADIUS:
            provider = "radius"
        else:
            from pi_plugins.signin.login_list import TITLE, rows

            known = known_providers(ctx.agent_dir)
            names = [p for p in known if p not in SUBSCRIPTION_ONLY] if use_key else \
                [p for p in known if p in flows]
            labels = rows(names, "api_key" if use_key else "oauth", flows, ctx.agent_dir,
                          getattr(ctx, "model_registry", None))
            provider = labels.get(await ui.select(TITLE, list(labels)) or "")
        if provider is None:
            return
    elif provider not in flows:
        use_key = True
    elif provider not in SUBSCRIPTION_ONLY:  # both ways in (pi 1.6): ask which
        account, key_label = method_labels(provider, ctx.agent_dir)
        how = await ui.select(f"Select authentication method for {display_name(provider, ctx.agent_dir)}:",
                              [account, key_label])
        if how is None:
            return
        use_key = how == key_label
    if use_key:
        key = (await ui.input(f"Enter API key for {provider}:") or "").strip()
        if not key:
            ui.notify(f"Failed to save API key for {provider}: API key cannot be empty.", "error")
            return
        store.set_api_key(provider, key)
        await _after_login(ctx, provider, f"Saved API key for {provider}", store.path)
        return
    flow = flows[provider]

    def on_auth(url: str, instructions: str | None) -> None:
        opened = open_browser(url)
        ui.notify(("A browser window should open. " if opened else "Open this link to sign in: ")
                  + url + (f"\n{instructions}" if instructions else ""))

    async def prompt(message: str, placeholder: str | None, allow_empty: bool) -> str:
        answer = await ui.input(message, placeholder or "")
        if answer is None and not allow_empty:
            raise SignInError("Login cancelled")
        return answer or ""

    async def manual_code() -> str:
        answer = await ui.input("Paste redirect URL below, or complete login in browser:")
        if not answer:
            raise SignInError("Login cancelled")
        return answer

    async def select(message: str, options: list[tuple[str, str]]) -> str | None:
        labels = [label for _, label in options]
        picked = await ui.select(message, labels)
        return next((key for key, label in options if label == picked), None)

    async def paste_code(url: str, instructions: str | None, message: str) -> str | None:
        from pi_plugins.signin import paste_dialog
        from pi_plugins.signin.login_list import provider_name

        open_browser(url)
        return await paste_dialog.ask(ui, f"Login to {provider_name(provider, flows)}", url, instructions, message)

    closers: list = []
    running: list[asyncio.Task] = []
    gave_up: list[bool] = []

    def cancel() -> None:  # Escape on the device-code screen
        gave_up.append(True)
        for task in running:
            task.cancel()

    def device_code(url: str, code: str) -> None:
        from pi_plugins.signin import device_screen
        from pi_plugins.signin.login_list import provider_name

        close = device_screen.show(ui, f"Login to {provider_name(provider, flows)}", url, code, cancel)
        if close is not None:  # pi 1.6's screen: Enter opens the page and copies the code
            closers.append(close)
            return
        ui.notify(f"Open {url} and enter code: {code}\nWaiting for authentication...")

    callbacks = LoginCallbacks(on_auth=on_auth, prompt=prompt,
                               progress=lambda message: ui.notify(message),
                               manual_code=manual_code if flow.uses_callback_server else None,
                               select=select, device_code=device_code, paste_code=paste_code)
    waiting = getattr(ui, "signing_in", None)  # the chat reports pi 1.6's blocked ``auth`` meanwhile
    try:
        with waiting(flow.name) if waiting is not None else contextlib.nullcontext():
            running.append(asyncio.ensure_future(
                store.login(provider, callbacks, **login_options(provider, ctx.agent_dir))))
            try:
                await running[0]
            finally:
                for close in closers:
                    close()
    except asyncio.CancelledError:
        if not gave_up:
            running[0].cancel()
            raise
        return  # Escape: "Login cancelled", as pi 1.6 says nothing more
    except Exception as exc:
        if str(exc) != "Login cancelled":
            ui.notify(f"Failed to login to {flow.name}: {exc}", "error")
        return
    await _after_login(ctx, provider, f"Logged in to {flow.name}", store.path)
    if provider == "radius":
        await _offer_radius_mcp(ctx, provider)


def select_after_login(provider: str, available: Iterable, action: str):
    """(the model to select, or why none) after signing in to ``provider`` with no model
    selected yet: its default model, in pi's words when there is none to take."""
    if provider not in DEFAULT_MODEL_PER_PROVIDER:
        return None, (f'{action}, but no default model is configured for provider "{provider}". '
                      "Use /model to select a model.")
    models = [m for m in available if m.provider == provider]
    if not models:
        return None, f"{action}, but no models are available for that provider. Use /model to select a model."
    wanted = DEFAULT_MODEL_PER_PROVIDER[provider]
    model = next((m for m in models if m.id == wanted), None)
    if model is None:
        return None, f'{action}, but its default model "{wanted}" is not available. Use /model to select a model.'
    return model, None


def _refresh_catalogue(ctx, registry, provider: str, action: str) -> None:
    """pi 1.6 refreshes the signed-in provider's catalogue in the background and says so
    only when that fails."""
    from pi_plugins.providers.background_refresh import refresh_in_background

    task = refresh_in_background(registry, providers=[provider])
    if task is not None:
        task.add_done_callback(lambda done: done.cancelled() or not done.result() or ctx.ui.notify(
            f"{action}, but its model catalog could not be refreshed; using cached models.", "warning"))


async def _after_login(ctx, provider: str, action: str, path) -> None:
    """As pi: the chat sees the new credentials at once and, when it had no model yet,
    takes the provider's default model (or says why it cannot)."""
    registry = ctx.model_registry
    if registry is not None:
        registry.refresh()
        _refresh_catalogue(ctx, registry, provider, action)
    chosen = problem = None
    current = ctx.model
    if registry is not None and current is not None and is_unknown(current):
        chosen, problem = select_after_login(provider, registry.available(), action)
        if chosen is not None:
            try:
                await ctx.set_model(chosen)
                ctx.settings.remember("defaultProvider", chosen.provider)  # pi 1.6 saves this one
                ctx.settings.remember("defaultModel", chosen.id)
            except Exception as exc:  # pragma: no cover - a plugin refused the model
                chosen, problem = None, (f"{action}, but selecting its default model failed: {exc}. "
                                         "Use /model to select a model.")
    if chosen is not None:
        ctx.ui.notify(f"{action}. Selected {chosen.id}. Credentials saved to {path}")
        return
    ctx.ui.notify(f"{action}. Credentials saved to {path}")
    if problem:
        ctx.ui.notify(problem, "error")


async def _offer_radius_mcp(ctx, provider: str) -> None:
    """pi 1.6's question after a Radius sign-in in the chat; a yes adds the server and
    reloads, so the MCP plugin connects it."""
    from pi_plugins.mcp.config import add_server
    from pi_plugins.signin.radius_mcp import plan

    planned = plan(provider, ctx.agent_dir, ctx.cwd)
    if planned is None:
        return
    path, name, entry = planned
    if await ctx.ui.select(f"Configure {display_name(provider)} MCP in {path}?", ["Yes", "No"]) != "Yes":
        return
    try:
        add_server(path, name, entry)
    except (OSError, ValueError) as exc:
        ctx.ui.notify(f"Could not update {path}: {exc}", "error")
        return
    await ctx.reload()


async def logout(args: str, ctx) -> None:
    ui = ctx.ui
    store = auth_storage(ctx.agent_dir)
    stored = sorted(store.providers)
    provider = args.strip() or None
    if provider is None:
        if not stored:
            ui.notify("No stored credentials to remove. /logout only removes credentials saved by "
                      "/login; environment variables and models.json config are unchanged.")
            return
        flows = sign_ins(ctx.agent_dir)
        labels = [_choice_label(p, flows) if (store.get(p) or {}).get("type") == "oauth" else p for p in stored]
        provider = _from_label(await ui.select("Select provider to logout:", labels))
        if provider is None:
            return
    entry = store.get(provider)
    if not store.remove(provider):
        ui.notify(f"No stored credentials for {provider}.")
    elif entry and entry.get("type") == "oauth":
        ui.notify(f"Logged out of {display_name(provider, ctx.agent_dir)}")
    else:
        ui.notify(f"Removed stored API key for {provider}. Environment variables and models.json "
                  "config are unchanged.")
