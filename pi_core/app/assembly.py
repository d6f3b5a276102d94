"""The one assembly: a :class:`pi_core.app.harness.Harness` from the parts a caller
found (plugins, session, model), joined to the model registry, checked
(``settings_problems`` once per settings object, so pi packages missing from the disk are
installed in every mode; ``configuration_problems``) and started; ``pi`` (:func:`pi_plugins.cli.wiring.build_app`),
the SDK, ``pi serve``, batch tasks and subagents all make theirs here, so each runs the
same code.
"""

from __future__ import annotations

import asyncio
import sys
import weakref
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
    ``registry`` supplies keys, headers and models (else ``get_api_key`` and
    ``resolve_model``); ``flags`` are ``ctx.get_flag``'s; ``before_start(harness)`` runs
    before the session starts. Raises :class:`ConfigurationError`."""
    from pi_core.app.preflight import preflight

    if settings is not None and settings not in _CHECKED:  # serve, batch, the SDK: checked here
        for problem in await check_settings(plugins, settings):
            print(f"warning: {problem}", file=sys.stderr, flush=True)
    if registry is not None:
        get_api_key = get_api_key or registry.api_key
        resolve_model = resolve_model or registry.find
    harness = Harness(
        plugins=plugins, session=session, model=model, thinking_level=thinking_level,
        model_is_explicit=model_is_explicit, cwd=cwd, settings=settings, options=options, ui=ui,
        agent_dir=agent_dir, tools=tools, get_api_key=get_api_key,
        get_headers=registry.request_headers if registry is not None else None,
        get_env=registry.request_env if registry is not None else None,
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


#: The settings whose ``settings_problems`` were asked (or are being asked), each once.
_CHECKED: weakref.WeakKeyDictionary[Any, asyncio.Future] = weakref.WeakKeyDictionary()


async def check_settings(plugins: Any, settings: Any) -> list[str]:
    """Ask ``settings_problems`` once per settings object, however many harnesses are
    assembled on it (batch tasks at once wait for the first asking); the problems are
    added to ``settings.problems`` and returned to the first caller only, who says them."""
    asked = _CHECKED.get(settings)
    if asked is not None:
        if not asked.done():
            await asyncio.shield(asked)
        return []
    asked = _CHECKED[settings] = asyncio.get_running_loop().create_future()
    try:
        problems = [str(p) for p in await plugins.call("settings_problems", settings=settings, ctx=None)]
    except BaseException:
        del _CHECKED[settings]
        asked.set_result(None)
        raise
    if isinstance(getattr(settings, "problems", None), list):
        settings.problems.extend(problems)
    asked.set_result(None)
    return problems


def check_settings_in_background(plugins: Any, settings: Any,
                                 done: Callable[[list[str]], Any]) -> asyncio.Task | None:
    """Ask ``settings_problems`` for ``settings`` in a worker thread while the caller goes
    on (``pi serve``: a package install never holds the server or its sessions); the
    harnesses assembled meanwhile neither ask nor wait, and start without what is still
    being installed. ``done(problems)`` runs on the caller's loop once it is over (the
    problems are also added to ``settings.problems``). None: these settings were asked."""
    if settings in _CHECKED:
        return None
    loop = asyncio.get_running_loop()
    _CHECKED[settings] = marker = loop.create_future()
    marker.set_result(None)

    def ask() -> list[str]:  # on its own event loop: a hook that blocks blocks only it
        return [str(p) for p in asyncio.run(plugins.call("settings_problems", settings=settings, ctx=None))]

    async def check() -> None:
        try:
            problems = await loop.run_in_executor(None, ask)  # the caller's context vars stay here
        except Exception as exc:  # a plugin's bug: said, never the server's end
            problems = [f"checking the settings failed: {exc!r}"]
        if isinstance(getattr(settings, "problems", None), list):
            settings.problems.extend(problems)
        done(problems)

    return loop.create_task(check())


async def spawn_child(parent: Harness, *, model: Model | None = None, thinking_level: str | None = None,
                      system_prompt: str | None = None, options: Any = None,
                      before_start: Callable[[Harness], Any] | None = None) -> Harness:
    """A child agent of ``parent`` (``ctx.spawn``), not started. It shares the plugins,
    tools, providers (their HTTP pool), settings, keys and models; its context and
    session are its own (a new file naming the parent's as ``parentSession``, or in
    memory). Unset arguments are the parent's."""
    from pi_core.session import Session

    ctx, session = parent.ctx, parent.session
    if session.file is None:
        own = Session.in_memory(ctx.cwd)
    else:
        own = Session.create(ctx.cwd, session.sessions_dir, parent_session=str(session.file))

    def share(child: Harness) -> None:
        child.agent.providers = parent.agent.providers  # the same objects, the same pool
        child.agent.get_headers, child.available_models = parent.agent.get_headers, parent.available_models
        child.agent.get_env = parent.agent.get_env
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
    """Why no request can go to ``model``: it names the variable of the key it needs and
    none is set (a model without ``api_key_env`` may need none: its provider decides)."""
    if model.api_key_env is None or registry.has_auth(model):
        return None
    return (f"No API key found for {model.provider}: set {registry.env_var(model)}, pass "
            f"--api-key, or add the key to {registry.auth.path} (`pi --list-models` shows "
            "the models that have one).")
