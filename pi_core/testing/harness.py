"""Harnesses for plugin tests: a scripted model, a temporary project, real session files.

The ``harness`` fixture is a :class:`HarnessMaker`; inside a test's coroutine::

    harness = await make(my_plugin, script=[Reply(tool_calls=[("todo", {...})]), Reply(text="ok")])
    await harness.prompt("go")
    await run_command(harness, "/todos")
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pi_core.testing.scripted import Reply, ScriptedProvider, scripted_model


class HarnessMaker:
    """Makes started harnesses in ``tmp_path``: the project is ``tmp_path/"work"`` and
    sessions are files under ``tmp_path/"sessions"``. The last provider made is
    ``self.provider`` (its ``requests`` are what the model was sent)."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = Path(tmp_path)
        self.work = self.tmp_path / "work"
        self.sessions = self.tmp_path / "sessions"
        self.provider: ScriptedProvider | None = None

    async def __call__(self, *plugins: Any, script: Sequence[Reply] = (), router=None,
                       builtins: bool = False, session: Any = "file", model=None,
                       context_window: int = 128_000, **options: Any):
        """A started harness over ``plugins`` (after the built-ins with ``builtins=True``).

        ``session`` is ``"file"`` (a new session file), ``"memory"``, or a ``Session``;
        the other keywords go to :func:`pi_plugins.sdk.create_harness` (``ui``, ``settings``,
        ``tools``, ``thinking_level``…).
        """
        from pi_core.session import Session
        from pi_plugins.sdk import create_harness

        self.work.mkdir(parents=True, exist_ok=True)
        self.provider = ScriptedProvider(list(script), router=router)
        if session == "file":
            session = Session.create(self.work, self.sessions)
        elif session == "memory":
            session = None
        options.setdefault("cwd", str(self.work))
        return await create_harness(
            self.provider, *plugins, model=model or scripted_model(context_window=context_window),
            session=session, builtins=builtins, **options)


async def run_command(harness: Any, text: str) -> Any:
    """Run the plugin command ``/name args`` on ``harness`` and return what its handler
    returns. Unlike the chat, an unknown command or a handler that raises fails the test."""
    name, _, args = text.removeprefix("/").partition(" ")
    commands = {c.name: c for c in await harness.commands() if c.handler is not None}
    if name not in commands:
        raise LookupError(f"no plugin command /{name}; there are: "
                          f"{', '.join('/' + n for n in sorted(commands)) or 'none'}")
    result = commands[name].handler(args, harness.ctx)
    return await result if inspect.isawaitable(result) else result
