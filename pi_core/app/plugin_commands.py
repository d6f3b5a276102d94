"""The plugins' slash commands: collected (``register_commands``) and numbered as pi
numbers them, and run at once when a prompt names one with a handler, as pi runs
extension commands (even while the agent runs)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import attrs


async def collect(plugins: Any, ctx: Any) -> list:
    """Slash commands from the plugins (``register_commands``). Plugin commands of the
    same name all stay reachable, numbered in load order (``/review:1``, ``/review:2``),
    as in pi; a skill or template command of a taken name gives way."""
    return number_duplicates(await plugins.call("register_commands", ctx=ctx))


async def handler_for(harness: Any, name: str) -> Callable | None:
    for command in await harness.commands():
        if command.name == name and command.handler is not None:
            return command.handler
    return None


async def run_extension_command(harness: Any, text: str) -> bool:
    """Run ``/name args`` if a plugin's command ``name`` has a handler (True); a handler
    that raises is reported, not raised."""
    name, _, args = text[1:].partition(" ")
    handler = await handler_for(harness, name)
    if handler is None:
        return False
    try:
        result = handler(args, harness.ctx)
        if inspect.isawaitable(result):
            await result
    except Exception as exc:
        harness.plugins.report(f"command:{name}", "command", exc)
    return True


def number_duplicates(commands: list) -> list:
    """Commands in order, extension commands sharing a name suffixed ``:1``, ``:2``…;
    for other sources (skills, templates) a later one replaces an earlier one."""
    counts: dict[str, int] = {}
    for command in commands:
        if command.source == "extension":
            counts[command.name] = counts.get(command.name, 0) + 1
    result: list = []
    seen: dict[str, int] = {}
    numbered: dict[str, int] = {}
    for command in commands:
        name = command.name
        if command.source == "extension" and counts[name] > 1:
            numbered[name] = numbered.get(name, 0) + 1
            result.append(attrs.evolve(command, name=f"{name}:{numbered[name]}"))
            continue
        if command.source != "extension" and counts.get(name):
            continue  # an extension command has the name
        if name in seen:
            result[seen[name]] = command
        else:
            seen[name] = len(result)
            result.append(command)
    return result
