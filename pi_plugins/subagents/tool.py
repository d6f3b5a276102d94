"""The ``subagent`` tool: delegate a task to a child agent, or several in parallel.

``{"task": "...", "agent"?: "scout"}`` runs one child; ``{"tasks": [{"task", "agent"?},
...]}`` fans out. Children run as asyncio tasks of this process (see
:mod:`pi_plugins.subagents.children`), at most ``subagents.maxConcurrency`` (default 4)
at once per parent; a child may spawn its own only while its depth is below
``subagents.maxDepth`` (default 1: children cannot). Progress reaches the parent as
``tool_execution_update``; aborting the parent aborts every child. The result is each
child's final text, with its usage and session file in ``details``.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from typing import TYPE_CHECKING, Any

from pi_core.protocol.messages import AssistantMessage
from pi_core.protocol.tools import Tool, ToolResult, ToolRun
from pi_core.protocol.usage import total_usage
from pi_plugins import budget as budgets
from pi_plugins.subagents import TOOL_NAME
from pi_plugins.subagents.definitions import Definitions, discover_agents

if TYPE_CHECKING:
    from pi_plugins.budget.limits import Spent
    from pi_plugins.subagents.children import ChildState

log = logging.getLogger("pi.subagents")

DEFAULT_MAX_CONCURRENCY = 4
DEFAULT_MAX_DEPTH = 1

_TASK: dict[str, Any] = {
    "type": "object",
    "properties": {
        "task": {"type": "string", "minLength": 1, "description": "What the subagent should do, in full: it sees nothing of this conversation"},
        "agent": {"type": "string", "description": "The name of an agent definition (default: a general agent like you)"},
    },
    "required": ["task"],
    "additionalProperties": False,
}

PARAMETERS = {
    "type": "object",
    "properties": {
        "task": _TASK["properties"]["task"],
        "agent": _TASK["properties"]["agent"],
        "tasks": {"type": "array", "minItems": 1, "items": _TASK,
                  "description": "Several tasks to run in parallel, each {task, agent?}"},
    },
    "additionalProperties": False,
}

INTRO = (
    "Delegate a task to a subagent: a separate agent with a fresh context that works on it "
    "alone and returns its final answer. Give {task} (and optionally {agent}) for one "
    "subagent, or {tasks: [{task, agent?}, ...]} to run several in parallel. Describe each "
    "task completely: a subagent sees nothing of this conversation."
)

#: One concurrency limit per parent session (by its ctx).
_slots: weakref.WeakKeyDictionary[Any, tuple[int, asyncio.Semaphore]] = weakref.WeakKeyDictionary()


def describe(definitions: Definitions) -> str:
    """The tool's description: what it does and the agents it knows."""
    if not definitions.agents:
        return INTRO
    lines = [f"- {d.name}: {d.description}" for d in definitions.agents.values()]
    return INTRO + "\n\nAvailable agents:\n" + "\n".join(lines)


def _limit(settings, key: str, default: int) -> int:
    value = settings.get(key, default)
    return value if isinstance(value, int) and value >= 0 else default


def _slots_for(ctx, limit: int) -> asyncio.Semaphore:
    held = _slots.get(ctx)
    if held is None or held[0] != limit:
        held = _slots[ctx] = (limit, asyncio.Semaphore(max(1, limit)))
    return held[1]


def _progress_text(states: list[ChildState]) -> str:
    if len(states) == 1:
        s = states[0]
        return f"{s.status}: {s.last}" if s.last else s.status
    done = sum(s.status in ("done", "failed") for s in states)
    running = sum(s.status == "running" for s in states)
    head = f"{done}/{len(states)} done, {running} running"
    rows = [f"[{i + 1}] {s.agent or 'agent'} {s.status}" + (f": {s.last}" if s.last else "")
            for i, s in enumerate(states)]
    return "\n".join([head, *rows])


def _result(states: list[ChildState]) -> ToolResult:
    result = _answer(states)
    usages = [AssistantMessage(usage=s.usage) for s in states if s.usage is not None]
    result.usage = total_usage(usages) if usages else None  # pi 1.6: on the tool result
    return result


def _answer(states: list[ChildState]) -> ToolResult:
    details = {"results": [s.as_json() for s in states], "spent": _spent(states).as_json()}
    failed = [s for s in states if s.status == "failed"]
    if len(states) == 1:
        s = states[0]
        if failed:
            return ToolResult.text(f"Subagent failed: {s.error}" + (f"\n\n{s.text}" if s.text else ""),
                                   details, is_error=True)
        return ToolResult.text(s.text or "(the subagent gave no answer)", details)
    parts = []
    for i, s in enumerate(states):
        title = f"## [{i + 1}] {s.agent or 'agent'}: {s.status}"
        body = s.text or "(no answer)"
        if s.status == "failed":
            body = f"Failed: {s.error}" + (f"\n\n{s.text}" if s.text else "")
        parts.append(f"{title}\n{body}")
    return ToolResult.text("\n\n".join(parts), details, is_error=len(failed) == len(states))


def _spent(states: list) -> Spent:
    """What the children have spent so far: the parent's budget counts it."""
    from pi_plugins.budget.limits import Spent

    total = Spent()
    for state in states:
        total = total.add(state.spent_now())
    return total


class SubagentTool(Tool):
    """Off by default; ``--tools ...,subagent`` or ``subagents.enabled`` turns it on."""

    async def execute(self, args: dict, run: ToolRun) -> ToolResult:
        from pi_plugins.subagents.children import ChildState, depth_of, run_child

        parent = run.ctx
        if parent.session is None:
            return ToolResult.error("subagent needs a harness (a session) to run children in")
        settings = run.ctx.settings
        max_depth = _limit(settings, "subagents.maxDepth", DEFAULT_MAX_DEPTH)
        if depth_of(parent) >= max_depth:
            return ToolResult.error(
                f"subagents may not spawn subagents here (subagents.maxDepth is {max_depth})")
        if ("task" in args) == ("tasks" in args):
            return ToolResult.error("give either task (one subagent) or tasks (several), not both")
        specs = args["tasks"] if "tasks" in args else [{"task": args["task"], "agent": args.get("agent")}]
        definitions = discover_agents(parent.cwd, parent.agent_dir)
        unknown = sorted({s["agent"] for s in specs if s.get("agent") and definitions.find(s["agent"]) is None})
        if unknown:
            known = ", ".join(definitions.agents) or "none are defined"
            return ToolResult.error(f"unknown agent {', '.join(unknown)} (known: {known})")
        states = [ChildState(task=s["task"], agent=s.get("agent")) for s in specs]
        slots = _slots_for(parent, _limit(settings, "subagents.maxConcurrency", DEFAULT_MAX_CONCURRENCY))

        def progress() -> None:
            run.update(ToolResult.text(_progress_text(states), {"results": [s.as_json() for s in states]}))

        async def one(state: ChildState) -> None:
            async with slots:
                if run.signal.aborted:
                    return
                definition = definitions.find(state.agent) if state.agent else None
                await run_child(parent, state, definition, max_depth, progress, run.signal)

        children = [asyncio.ensure_future(one(s)) for s in states]
        # until the result (whose details carry it) is on the parent's path
        spend = lambda: _spent(states)  # noqa: E731
        counted = budgets.spend_source(parent, spend)
        try:
            await asyncio.gather(*children)
        except BaseException:
            for child in children:
                child.cancel()
            await asyncio.gather(*children, return_exceptions=True)
            raise
        finally:
            counted()
        return _result(states)


def subagent_tool(cwd: str, agent_dir, enabled: bool) -> SubagentTool:
    definitions = discover_agents(cwd, agent_dir)
    for problem in definitions.problems:  # left out, and said once per start
        log.warning("agent definition skipped: %s", problem)
    return SubagentTool(name=TOOL_NAME, label="Subagent", description=describe(definitions),
                        parameters=PARAMETERS, default_active=enabled)
