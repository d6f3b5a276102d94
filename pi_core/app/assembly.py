"""The one assembly: a :class:`pi_core.app.harness.Harness` from its parts, as ``pi``
(:func:`pi_plugins.cli.wiring.build_app`), the SDK (:func:`pi_core.app.sdk.create_harness`),
``pi serve``, batch tasks and subagents all make theirs, so each runs the same code.

The parts are what the caller found its own way (plugins loaded or given, a session
opened or new, a model chosen); the assembly joins them to the model registry (keys,
headers, the models to switch to, the check before a prompt), asks the plugins whether
their configuration holds (``configuration_problems``) and starts the session.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pi_core.app.harness import Harness
from pi_core.protocol.events import StartReason
from pi_core.protocol.model import Model


class ConfigurationError(ValueError):
    """A plugin's configuration does not hold (``configuration_problems``): one line each."""


async def assemble(
    *, plugins: Any, session: Any, model: Model, registry: Any = None, settings: Any = None,
    cwd: str | None = None, agent_dir: Any = None, thinking_level: str | None = None,
    model_is_explicit: bool = False, options: Any = None, ui: Any = None, tools: list | None = None,
    system_prompt: str = "", scoped_models: list | None = None, flags: dict | None = None,
    plugin_loader: Callable[[], Any] | None = None,
    get_api_key: Callable[[Model], Any] | None = None,
    resolve_model: Callable[[str, str], Model | None] | None = None,
    reason: StartReason | None = "startup", before_start: Callable[[Harness], Any] | None = None,
) -> Harness:
    """A harness over these parts, started with ``reason`` (``None``: not started).

    ``registry`` (a :class:`pi_core.app.registry.ModelRegistry`) supplies keys, headers,
    the models to switch to and restore, and what a missing key says; without one,
    ``get_api_key`` and ``resolve_model`` may. ``flags`` are the plugins' flag values
    (``ctx.get_flag``). ``before_start(harness)`` runs once the plugins' configuration
    holds and before the session starts. Raises :class:`ConfigurationError`."""
    from pi_core.app.auth import preflight

    if registry is not None:
        get_api_key = get_api_key or registry.api_key
        resolve_model = resolve_model or registry.find
    harness = Harness(
        plugins=plugins, session=session, model=model, thinking_level=thinking_level,
        model_is_explicit=model_is_explicit, cwd=cwd, settings=settings, options=options, ui=ui,
        agent_dir=agent_dir, tools=tools, get_api_key=get_api_key,
        get_headers=registry.request_headers if registry is not None else None,
        resolve_model=resolve_model, system_prompt=system_prompt,
        available_models=registry.available if registry is not None else None,
        scoped_models=scoped_models,
        preflight=preflight(get_api_key, (lambda chosen: auth_problem(registry, chosen)) if registry else None),
        model_registry=registry, plugin_loader=plugin_loader,
    )
    harness.ctx.flags = dict(flags or {})
    problems = await plugins.call("configuration_problems", ctx=harness.ctx)
    if problems:
        raise ConfigurationError("\n".join(str(p) for p in problems))
    if before_start is not None:
        before_start(harness)
    if reason is not None:
        await harness.start(reason=reason)
    return harness


async def spawn_child(parent: Harness, *, model: Model | None = None, thinking_level: str | None = None,
                      system_prompt: str | None = None, options: Any = None,
                      before_start: Callable[[Harness], Any] | None = None) -> Harness:
    """A child agent of ``parent`` in this process (``ctx.spawn``; a subagent), not started.

    It shares what is costly and safe to share: the plugins, the tool objects, the provider
    objects (so its requests go through the same pooled HTTP client), settings, keys and
    the model list; it owns its context and its session, a new file in the parent's
    sessions folder that names the parent's as ``parentSession`` (as a fork's does), in
    memory where the parent's is. Unset arguments are the parent's."""
    from pi_core.session import Session

    ctx, session = parent.ctx, parent.session
    if session.file is None:
        own = Session.in_memory(ctx.cwd)
    else:
        own = Session.create(ctx.cwd, session.sessions_dir, parent_session=str(session.file))

    def share(child: Harness) -> None:
        child.agent.providers = parent.agent.providers  # the same objects, the same pool
        child.agent.get_headers, child.available_models = parent.agent.get_headers, parent.available_models
        if before_start is not None:
            before_start(child)

    return await assemble(
        plugins=parent.plugins, session=own, model=model or parent.model, registry=parent.model_registry,
        thinking_level=thinking_level or parent.thinking_level, model_is_explicit=True, cwd=ctx.cwd,
        settings=ctx.settings, options=options if options is not None else ctx.options,
        agent_dir=ctx.agent_dir, tools=parent.agent.tools, get_api_key=parent.agent.get_api_key,
        resolve_model=parent.resolve_model, before_start=share, reason=None,
        system_prompt=parent.base_system_prompt if system_prompt is None else system_prompt)


def auth_problem(registry: Any, model: Model) -> str | None:
    """Why no request can go to ``model``, said before any request: its provider names
    the variable of a key it needs (the catalogue's providers do) and no key is set. A
    plugin's own model (no ``api_key_env``) may need none: its provider decides."""
    if model.api_key_env is None or registry.has_auth(model):
        return None
    return (f"No API key found for {model.provider}: set {registry.env_var(model)}, pass "
            f"--api-key, or add the key to {registry.auth.path} (`pi --list-models` shows "
            "the models that have one).")
