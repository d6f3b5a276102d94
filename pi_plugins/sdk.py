"""Compose an agent in Python, without the CLI and without plugin discovery (pi's SDK).

    harness = await create_harness(my_provider, my_tools, model=model)
    harness.subscribe(print)
    await harness.prompt("hello")

Plugins (modules or objects with ``@hookimpl`` functions) register in the order given,
after the built-ins with ``builtins=True``; without them, ``local_environment``,
``retries`` and ``settle_boundary`` still register first, so ``!cmd`` runs and rate limits are retried as pi
does. The session is in memory unless one is given. ``model`` is a :class:`Model`, a
``pi --model`` pattern, or ``None`` (the settings' or pi's default), resolved with the
plugins' models and models.json, local servers looked for as ``pi`` does.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from importlib import import_module
from typing import Any

from pi_core.app.harness import Harness
from pi_core.plugins import Plugins
from pi_core.protocol.model import Model


async def create_harness(
    *plugins: Any,
    model: Model | str | None = None,
    session: Any = None,
    cwd: str | None = None,
    builtins: bool = False,
    thinking_level: str | None = None,
    settings: Any = None,
    options: Any = None,
    tools: list | None = None,
    active_tools: list[str] | None = None,
    ui: Any = None,
    get_api_key: Callable[[Model], Any] | None = None,
    resolve_model: Callable[[str, str], Model | None] | None = None,
    system_prompt: str = "",
) -> Harness:
    """A started harness over the given plugins (see the module docstring)."""
    from pi_core.app.discovery import load_plugins
    from pi_core.app.settings import Settings
    from pi_core.session import Session

    cwd = cwd or os.getcwd()
    if settings is None:
        settings = Settings.load(cwd)
    registry = load_plugins(cwd=cwd, discover=False, settings=settings) if builtins else Plugins()
    for name in () if builtins else ("local_environment", "retries", "settle_boundary"):
        registry.register(import_module(f"pi_plugins.{name}"), name, source="builtin",
                          location=f"pi_plugins.{name}")
    for plugin in plugins:
        registry.register(plugin)
    explicit, models = True, None
    if not isinstance(model, Model):
        if model is not None and not isinstance(model, str):
            raise TypeError(f"model must be a Model, a pattern such as 'provider/id', or None; "
                            f"not {type(model).__name__}")
        model, level, explicit, models = await _resolve_model(model, registry, settings)
        thinking_level = thinking_level or level
    from pi_core.app.assembly import assemble

    harness = await assemble(
        plugins=registry, model=model, registry=models,
        # ``is None``: a new session is empty, and an empty Session is falsy.
        session=session if session is not None else Session.in_memory(cwd),
        model_is_explicit=explicit, thinking_level=thinking_level, cwd=cwd, settings=settings,
        options=options, ui=ui, tools=tools, get_api_key=get_api_key, resolve_model=resolve_model,
        system_prompt=system_prompt, reason=None)
    if active_tools is not None:  # before session_start, so plugins may add to the choice
        await harness.agent.setup()
        harness.agent.set_active_tools(active_tools)
    await harness.start(reason="startup")
    return harness


async def _resolve_model(pattern: str | None, plugins: Plugins,
                         settings: Any) -> tuple[Model, str | None, bool, Any]:
    """(model, thinking level, explicit?, registry), as ``pi`` chooses
    (:func:`pi_plugins.models.start_model.choose_model`, which raises when none fits)."""
    from pi_plugins.models.registry import ModelRegistry
    from pi_plugins.models.start_model import choose_model, find_local_models

    models = await ModelRegistry.from_plugins(plugins)
    await find_local_models(models, plugins, settings, pattern=pattern)
    model, level, explicit, _ = choose_model(models, settings, pattern=pattern)
    return model, level, explicit, models
