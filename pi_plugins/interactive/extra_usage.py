"""pi 1.6's Anthropic extra-usage warning: when the chat's model is Anthropic's and the
credential is a Claude subscription (a sign-in in auth.json, or a key that is a
subscription token, ``sk-ant-oat…``), say once per chat that a third-party harness draws
on paid extra usage. Checked at the start and on every model change (``model_select``);
the setting ``warnings.anthropicExtraUsage: false`` turns it off, as in pi 1.6."""

from __future__ import annotations

import inspect
from typing import Any, cast

from pi_core import hookimpl

WARNING = ("Anthropic subscription auth is active. Third-party harness usage draws from extra usage and is "
           "billed per token, not your Claude plan limits. Manage extra usage at https://claude.ai/settings/usage. "
           "Disable this warning in /settings.")


def subscription_auth(registry: Any, model: Any) -> bool:
    """Whether ``model``'s requests go out on a Claude subscription."""
    entry = registry.auth.get("anthropic")
    if isinstance(entry, dict) and entry.get("type") == "oauth":
        return True
    key = registry.api_key(model)
    if inspect.isawaitable(key):  # a sign-in's refresh, never awaited here
        cast(Any, key).close()
        return True
    return isinstance(key, str) and key.startswith("sk-ant-oat")


def enabled(settings: Any) -> bool:
    """The setting (``/settings``' "Anthropic extra usage"), on unless set false."""
    return settings is None or settings.get("warnings.anthropicExtraUsage", True) is not False


class ExtraUsageWarning:
    """Registered by the chat for its lifetime: shows :data:`WARNING` at most once."""

    def __init__(self, tui: Any) -> None:
        self.tui = tui
        self.shown = False

    def check(self, model: Any) -> None:
        harness = self.tui.harness
        if self.shown or model is None or model.provider != "anthropic" or not enabled(harness.ctx.settings):
            return
        try:
            if not subscription_auth(harness.model_registry, model):
                return
        except Exception:  # a lookup that fails: the warning is only a warning
            return
        self.shown = True
        self.tui.add_text(f"Warning: {WARNING}", "warning")

    @hookimpl
    def model_select(self, event: Any) -> None:
        self.check(event.model)


def watch(tui: Any) -> None:
    """Check the starting model now and every model the chat switches to."""
    warning = ExtraUsageWarning(tui)
    tui.harness.plugins.register(warning, "interactive-extra-usage-warning")
    warning.check(tui.harness.model)
