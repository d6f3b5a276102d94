"""Running one subagent: a child agent in the parent's event loop (an asyncio task, not
a process), made by ``ctx.spawn``.

The child shares what is costly and safe to share: the parent's plugins, tool objects,
provider objects (so its requests go through the parent's pooled HTTP client, which is
per event loop), settings, keys and model list. It owns its context, built fresh from
the task, and its session: a new file in the parent's sessions folder whose header names
the parent's file as ``parentSession`` (as a fork's does); in memory when the parent's
session is. Its depth (the parent's plus one) decides whether it may spawn children, and
its budget is the parent's (:mod:`pi_plugins.budget`).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs
from attrs import define

from pi_core.protocol.codec import to_json
from pi_core.protocol.ctx import Ctx
from pi_core.protocol.model import Model
from pi_core.protocol.usage import final_assistant, total_usage
from pi_plugins import budget as budgets
from pi_plugins.budget.limits import Budget, Spent
from pi_plugins.subagents import TOOL_NAME
from pi_plugins.subagents.definitions import AgentDefinition

if TYPE_CHECKING:
    from pi_core.app.harness import Harness

#: How deep each session sits (by its ctx): absent means a top-level agent (depth 0).
_depths: weakref.WeakKeyDictionary[Ctx, int] = weakref.WeakKeyDictionary()


def depth_of(ctx: Ctx) -> int:
    return _depths.get(ctx, 0)


class ChildError(Exception):
    """The child could not be started (an unknown model, say): its message says why."""


@define
class ChildState:
    """A child's progress and, once it ends, its result."""

    task: str
    agent: str | None = None
    status: str = "queued"  # queued, running, done, failed
    text: str = ""
    turns: int = 0
    session: str | None = None
    stop_reason: str | None = None
    error: str | None = None
    usage: Any = None
    last: str = ""  # the latest thing the child did, for progress lines
    #: What the child has spent (its session's path; a callable while it runs).
    spent: Any = None

    def spent_now(self) -> Spent:
        return (self.spent() if callable(self.spent) else self.spent) or Spent()

    def as_json(self) -> dict:
        data = {"task": self.task, "agent": self.agent, "status": self.status, "text": self.text,
                "turns": self.turns, "session": self.session, "stopReason": self.stop_reason,
                "usage": to_json(self.usage) if self.usage is not None else None}
        if self.error:
            data["error"] = self.error
        return data


def find_model(parent: Ctx, pattern: str) -> Model:
    """A definition's ``model``: ``provider/id`` or an id among the parent's models."""
    registry = parent.model_registry
    models = list(registry.available()) if registry is not None else [m for m in [parent.model] if m]
    for match in (lambda m: m.key == pattern, lambda m: m.id == pattern,
                  lambda m: pattern.lower() in m.key.lower()):
        found = [m for m in models if match(m)]
        if found:
            return found[0]
    raise ChildError(f"model {pattern!r} is not among the available models")


async def build_child(parent: Ctx, definition: AgentDefinition | None, max_depth: int) -> Harness:
    """A started child of the session of ``parent`` (``ctx.spawn``; see the module docstring)."""
    model = find_model(parent, definition.model) if definition and definition.model else None
    thinking = definition.thinking if definition and definition.thinking else None
    options, system_prompt = None, None
    if definition is not None and definition.system_prompt:
        options = attrs.evolve(parent.options, system_prompt=definition.system_prompt)
        system_prompt = definition.system_prompt

    def share_budget(child: Harness) -> None:
        # the parent's limits on the parent's total, which includes this child's spend
        budgets.attach(child.ctx, Budget(parent=budgets.budget_of(parent),
                                         parent_spent=lambda: budgets.spent(parent)))

    child = await parent.spawn(model=model, thinking_level=thinking, system_prompt=system_prompt,
                               options=options, before_start=share_budget)
    depth = depth_of(parent) + 1
    _depths[child.ctx] = depth
    if definition is not None and definition.tools is not None:
        names = list(definition.tools)
    else:
        names = parent.get_active_tools()
    if depth >= max_depth:  # subagents.maxDepth: this child may not spawn its own
        names = [n for n in names if n != TOOL_NAME]
    await child.start()
    child.agent.set_active_tools(names)
    return child


async def run_child(parent: Ctx, state: ChildState, definition: AgentDefinition | None,
                    max_depth: int, on_progress: Callable[[], None], signal) -> ChildState:
    """Run the child to its end; ``state`` is filled in as it goes. Aborting ``signal`` (or
    cancelling this task) aborts the child, which ends before this returns or raises."""
    try:
        child = await build_child(parent, definition, max_depth)
    except ChildError as exc:
        state.status, state.error, state.stop_reason = "failed", str(exc), "error"
        on_progress()
        return state
    state.status = "running"
    state.spent = lambda: budgets.spent(child.ctx)
    state.session = str(child.session.file) if child.session.file else None
    on_progress()

    def follow(event: Any) -> None:
        kind = event.type
        if kind == "turn_end":
            state.turns += 1
            on_progress()
        elif kind == "tool_execution_start":
            state.last = f"{event.tool_name} {_brief(event.args)}"
            on_progress()
        elif kind == "message_end" and getattr(event.message, "role", None) == "assistant":
            text = event.message.text.strip()
            if text:
                state.last = text.splitlines()[-1][:200]
                on_progress()

    child.subscribe(follow)
    remove = signal.on_abort(child.abort)
    try:
        await child.prompt(state.task, source="extension")
    finally:
        remove()
        messages = child.messages
        final = final_assistant(messages)
        state.usage = total_usage(messages)
        state.text = final.text if final is not None else ""
        state.stop_reason = final.stop_reason if final is not None else None
        state.spent = budgets.spent(child.ctx)
        stop = budgets.stop_of(child.ctx)
        if stop is not None:  # its own or its parent's limit
            state.status, state.stop_reason = "failed", "budget"
            state.error = f"budget reached: {stop.describe()}"
        elif final is not None and final.stop_reason in ("error", "aborted"):
            state.status = "failed"
            state.error = final.error_message or final.stop_reason
        else:
            state.status = "done"
        await child.close()
        on_progress()
    return state


def _brief(args: Any) -> str:
    if not isinstance(args, dict):
        return ""
    for key in ("command", "path", "pattern", "task"):
        if isinstance(args.get(key), str):
            value = args[key].replace("\n", " ")
            return value if len(value) <= 80 else value[:77] + "..."
    return ""
