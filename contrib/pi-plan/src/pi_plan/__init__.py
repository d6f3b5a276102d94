"""pi-plan: a plan mode. The model explores with read-only tools and writes a plan; it
gets its other tools back only when the user approves the plan.

- ``/plan`` enters plan mode (or, in it, shows the plan so far); ``/plan approve``
  approves; ``/plan off`` leaves without approving. When the model's answer holds a
  ``Plan:`` with numbered steps, the user is also asked (``ctx.ui.confirm``) whether to
  approve it.
- In plan mode the model is offered only the read-only tools (``plan.tools``, default
  read, grep, find, ls and bash), and ``before_tool_call`` blocks anything else as a
  second guard, bash included unless the command only reads.
- Approval restores the tools active before, and puts a message in the conversation
  saying the plan is approved (with its steps), so the model goes ahead on the next prompt.
- The state is kept in ``custom`` entries (``pi-plan``) and rebuilt from the current
  branch at ``session_start`` and after ``/tree``: it survives resume and follows the
  branch.
"""

from __future__ import annotations

import re
import weakref
from typing import Any

import attrs
from attrs import define, field

from pi_core import Command, hookimpl
from pi_plan.readonly import is_read_only_command

CUSTOM_TYPE = "pi-plan"
DEFAULT_TOOLS = ("read", "grep", "find", "ls", "bash")

PLAN_PROMPT = """

# Plan mode
You are in plan mode: explore and plan, change nothing. You can only use read-only tools
({tools}); bash only runs commands that read (ls, cat, grep, git status/log/diff…), with no
output redirection. Do not try to write files.
When you have a plan, write it under a line "Plan:" as numbered steps:

Plan:
1. First step
2. Second step

The user approves the plan before anything is changed."""

_PLAN_HEADER = re.compile(r"^\W*plan\W*:?\W*$", re.I | re.M)
_STEP = re.compile(r"^\s*(\d+)[.)]\s+(.+?)\s*$", re.M)
_EMPHASIS = re.compile(r"(\*\*|__|\*)(.+?)\1")


@define
class PlanState:
    planning: bool = False
    #: The tools active before plan mode (None: the defaults), restored on approval.
    restore: list[str] | None = None
    steps: list[str] = field(factory=list)

    def to_data(self) -> dict:
        return {"planning": self.planning, "restoreTools": self.restore, "steps": self.steps}

    @classmethod
    def from_data(cls, data: Any) -> PlanState:
        if not isinstance(data, dict):
            return cls()
        restore = data.get("restoreTools")
        restore = [t for t in restore if isinstance(t, str)] if isinstance(restore, list) else None
        steps = [s for s in data.get("steps") or [] if isinstance(s, str)]
        return cls(bool(data.get("planning")), restore, steps)


_states: weakref.WeakKeyDictionary[Any, PlanState] = weakref.WeakKeyDictionary()


def plan_tools(ctx) -> list[str]:
    configured = ctx.settings.get("plan.tools")
    if isinstance(configured, list) and all(isinstance(t, str) for t in configured):
        return list(configured)
    return list(DEFAULT_TOOLS)


def extract_steps(text: str) -> list[str]:
    """The numbered steps after a ``Plan:`` line (markdown emphasis and headings allowed)."""
    header = None
    for match in _PLAN_HEADER.finditer(text):
        header = match
    if header is None:
        return []
    steps = []
    for match in _STEP.finditer(text[header.end():]):
        step = _EMPHASIS.sub(r"\2", match.group(2)).strip()
        if step:
            steps.append(step)
    return steps


def current(ctx) -> PlanState:
    state = _states.get(ctx)
    return state if state is not None else rebuild(ctx)


def rebuild(ctx) -> PlanState:
    """The state from the last ``pi-plan`` entry on the branch, with the tools to match."""
    session = getattr(ctx, "session", None)
    state = PlanState()
    for entry in reversed(session.path() if session is not None else []):
        if getattr(entry, "type", None) == "custom" and entry.custom_type == CUSTOM_TYPE:
            state = PlanState.from_data(entry.data)
            break
    before = _states.get(ctx)
    _states[ctx] = state
    if state.planning:
        ctx.set_active_tools(plan_tools(ctx))
    elif before is not None and before.planning:
        ctx.agent.set_active_tools(before.restore)
    return state


def _record(ctx, state: PlanState) -> None:
    _states[ctx] = state
    if getattr(ctx, "session", None) is not None:
        ctx.append_entry(CUSTOM_TYPE, state.to_data())


def enter(ctx) -> PlanState:
    state = current(ctx)
    if state.planning:
        return state
    names = ctx.get_active_tools()
    default = [t.name for t in ctx.agent.tools or [] if t.default_active]
    state = PlanState(True, None if sorted(names) == sorted(default) else names, [])
    ctx.set_active_tools(plan_tools(ctx))
    _record(ctx, state)
    return state


def leave(ctx, *, approved: bool) -> PlanState:
    """Leave plan mode, restore the tools; when ``approved``, tell the model so."""
    state = current(ctx)
    if not state.planning:
        return state
    ctx.agent.set_active_tools(state.restore)
    left = PlanState(False, None, state.steps)
    _record(ctx, left)
    if approved:
        from pi_core import CustomMessage

        text = "The user approved the plan. Plan mode is over: all your tools are available again."
        if state.steps:
            text += " Carry out the plan:\n" + "\n".join(f"{i}. {s}" for i, s in enumerate(state.steps, 1))
        else:
            text += " Carry out the plan you made."
        message = CustomMessage(custom_type=CUSTOM_TYPE, content=text, display=True,
                                details={"approved": True, "steps": state.steps})
        if getattr(ctx, "session", None) is not None:
            ctx.session.append_custom_message(message.custom_type, message.content, message.display,
                                              message.details)
        ctx.agent.messages.append(message)
    return left


def _render(state: PlanState) -> str:
    if not state.planning:
        return "Plan mode is off."
    if not state.steps:
        return "Plan mode is on; no plan yet. /plan approve approves, /plan off leaves."
    steps = "\n".join(f"{i}. {s}" for i, s in enumerate(state.steps, 1))
    return f"Plan mode is on. The plan:\n{steps}\n/plan approve approves it, /plan off leaves."


async def _plan_command(args: str, ctx) -> str:
    word = args.strip().lower()
    if word in ("", "on"):
        was = current(ctx).planning
        state = enter(ctx)
        text = _render(state) if was else (
            f"Plan mode on: the model can only read ({', '.join(plan_tools(ctx))}) until you approve its plan.")
    elif word in ("approve", "go", "yes"):
        if not current(ctx).planning:
            text = "Plan mode is off; nothing to approve."
        else:
            leave(ctx, approved=True)
            text = "Plan approved: the tools are back and the model will carry the plan out."
    elif word in ("off", "cancel", "exit"):
        was = current(ctx).planning
        leave(ctx, approved=False)
        text = "Plan mode off." if was else "Plan mode is off."
    elif word == "status":
        text = _render(current(ctx))
    else:
        text = "Usage: /plan [approve | off | status]"
    ctx.ui.notify(text, "info")
    return text


@hookimpl
def register_commands(ctx):
    return [Command(name="plan", description="Plan mode: read-only until you approve the plan",
                    handler=_plan_command, argument_hint="[approve | off | status]")]


@hookimpl
def session_start(event, ctx):
    _states.pop(ctx, None)
    rebuild(ctx)


@hookimpl
def session_tree(event, ctx):
    rebuild(ctx)


@hookimpl
def before_agent_start(event, ctx):
    if not current(ctx).planning:
        return None
    tools = ", ".join(plan_tools(ctx))
    return attrs.evolve(event, system_prompt=event.system_prompt + PLAN_PROMPT.format(tools=tools))


@hookimpl
def before_tool_call(event, ctx):
    """The second guard: whatever tools are active, plan mode runs only read-only calls."""
    if not current(ctx).planning:
        return None
    from pi_core import ToolCallDecision

    name = event.tool_name
    if name not in plan_tools(ctx):
        return ToolCallDecision(block=True, reason=(
            f"Plan mode: {name} is not available until the user approves the plan. "
            "Finish the plan (numbered steps under 'Plan:') instead."))
    command = event.arguments.get("command")
    if name == "bash" and isinstance(command, str) and not is_read_only_command(command):
        return ToolCallDecision(block=True, reason=(
            "Plan mode: only commands that read are allowed (ls, cat, grep, git status/log/diff…, "
            f"no redirection). Blocked: {command}"))
    return None


@hookimpl
async def agent_end(event, ctx):
    """A plan in the model's last answer is kept, and offered to the user for approval."""
    state = current(ctx)
    if not state.planning:
        return
    last = next((m for m in reversed(event.messages) if getattr(m, "role", None) == "assistant"), None)
    steps = extract_steps(last.text) if last is not None else []
    if not steps:
        return
    state = PlanState(True, state.restore, steps)
    _record(ctx, state)
    if not getattr(ctx.ui, "has_ui", True):
        return
    listing = "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1))
    if await ctx.ui.confirm("Approve the plan?", listing):
        leave(ctx, approved=True)
