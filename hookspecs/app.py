"""Hooks the application shell asks its feature plugins: whether the project is trusted,
what is wrong with the settings a plugin reads, and which sign-ins there are.

The shell holds no policy for these features; it calls the hook, and a built-in plugin
(``trust``, ``keys``, ``signin``) answers. Dropping that plugin drops the feature, and a
third-party plugin may answer instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hookspecs.markers import collect, decide, hookspec

if TYPE_CHECKING:
    from pi_core.protocol.ctx import Ctx


@hookspec
@decide(guard=True)
def decide_project_trust(event: Any, ctx: Ctx | None) -> Any:
    """Kind: decide (a guard: it fails closed). Whether the project's protected resources
    (``.pi/settings.json``, ``.pi/extensions``, skills…) may load, asked before any of
    them does: first before any plugin is loaded, of the built-in plugin named ``trust``
    alone (``event.quiet``: nothing may be asked, no other plugin is loaded), then, when
    that answer is not ``settled``, of every plugin loaded without the project's own
    (built-ins, installed packages, the agent dir's extensions, ``-e``), with ``ctx``
    (``ctx.ui`` asks where ``event.can_ask``). The built-in ``trust`` plugin decides as pi
    1.6 does (``-a``/``-na``, the ``project_trust`` hook, ``trust.json``,
    ``defaultProjectTrust``, the question).

    ``event`` (``pi_core``'s ``TrustQuestion``): ``cwd``, ``agent_dir``,
    ``approve`` (``-a`` True, ``-na`` False, else None), ``global_settings`` (the agent
    dir's settings.json as a dict), ``quiet``, ``can_ask``, ``chat`` (word the notice for
    the chat). Return an object with ``trusted`` (bool), ``problems`` (lines the shell
    prints as warnings), ``notice`` (a line saying what was skipped, or None) and
    ``settled`` (True when no plugin or question could change it); the last answer wins.
    No answer, an answer whose ``trusted`` is not True, or a handler that raises means
    untrusted: without the plugin no project code runs.
    """


@hookspec
@collect
def settings_problems(settings: Any, ctx: None) -> str | list[str] | None:
    """Kind: collect (a plain list). At start-up, once the settings are read and the
    plugins loaded (before the model is chosen): what is wrong with the settings this
    plugin reads (the built-in ``keys`` checks ``toolEnvironment``), one line each,
    worded for the user; the shell prints each as ``warning: LINE`` (in the chat, in its
    header). ``settings`` is the run's ``Settings`` (``pi_core``'s); ``ctx`` is
    ``None``: no harness runs yet."""


@hookspec
@collect(key="id")
def register_sign_ins(ctx: Ctx | None) -> Any:
    """Kind: collect (by ``id``, the provider). The first time auth.json's store needs a
    provider's sign-in (``/login``, ``pi auth login``, a token that expired): objects
    with ``id`` (the provider), ``name`` (what the user reads), async
    ``login(callbacks, **options)`` and ``refresh(credentials)`` returning the
    credentials auth.json keeps beside ``"type": "oauth"``, and ``api_key(credentials)``.
    The built-in ``signin`` plugin gives pi's three (Claude Pro/Max, ChatGPT Plus/Pro,
    GitHub Copilot); a later plugin's sign-in for the same provider replaces it.
    ``ctx`` may be ``None`` (the store is asked outside a run)."""
