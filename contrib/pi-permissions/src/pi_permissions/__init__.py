"""pi-permissions: every tool call passes a policy first (``before_tool_call``).

Rules come from settings.json, global and project, under ``"permissions"``::

    {"permissions": {
        "default": "ask",
        "allow": ["bash(git status*)", "edit(src/**)"],
        "ask":   ["bash(git push*)"],
        "deny":  [{"rule": "read(.env*)", "reason": "secrets stay out of the context"}]}}

``allow`` lets a call run, ``deny`` blocks it and tells the model why, ``ask`` asks the
user through ``ctx.ui``: allow once, allow this exact call or every call of the tool for
the rest of the session, or deny (optionally saying why, which the model reads). The
answers are remembered until the session changes; deny rules always win over them.
Where there is nobody to ask (print mode), an ``ask`` is a denial that says so.
``/permissions`` shows the rules and the remembered answers; ``/permissions reset``
forgets the answers.
"""

from __future__ import annotations

import weakref
from typing import Any

from attrs import define, field

from pi_core import Command, hookimpl
from pi_permissions.rules import Policy, Rule, Verdict, load_policy

SETTINGS_KEY = "permissions"
ALLOW_ONCE = "Allow once"
DENY = "Deny"
DENY_WITH_REASON = "Deny and tell the model why…"


@define
class SessionState:
    policy: Policy
    #: (tool, subject) pairs the user allowed for the session; subject None: every call.
    allowed: set[tuple[str, str | None]] = field(factory=set)
    reported: bool = False


_states: weakref.WeakKeyDictionary[Any, SessionState] = weakref.WeakKeyDictionary()


def state(ctx) -> SessionState:
    found = _states.get(ctx)
    if found is None:
        found = _states[ctx] = SessionState(load_policy(ctx.settings, SETTINGS_KEY))
    if found.policy.problems and not found.reported:
        found.reported = True
        for problem in found.policy.problems:
            ctx.ui.notify(f"pi-permissions: {problem} (ignored)", "warning")
    return found


def describe(tool_name: str, arguments: dict) -> str:
    """One line naming the call for a dialog."""
    if tool_name == "bash" and isinstance(arguments.get("command"), str):
        return f"bash: {arguments['command']}"
    if isinstance(arguments.get("path"), str):
        return f"{tool_name}: {arguments['path']}"
    shown = ", ".join(f"{k}={v!r}" for k, v in list(arguments.items())[:4])
    return f"{tool_name}({shown})"


def call_key(tool_name: str, arguments: dict) -> str | None:
    """What "allow this exact call" remembers: the command or the path, else nothing."""
    if tool_name == "bash" and isinstance(arguments.get("command"), str):
        return arguments["command"].strip()
    if isinstance(arguments.get("path"), str):
        return arguments["path"]
    return None


def denial(verdict: Verdict, tool_name: str) -> str:
    rule = verdict.rule
    if rule is None:
        text = f"Permission denied: {tool_name} calls are denied by default here (permissions.default)."
    else:
        text = f"Permission denied by the rule deny {rule} ({rule.source} settings)."
        if rule.reason:
            text += f" Reason: {rule.reason}"
    return text + " Do not try to get around this rule; choose another way or ask the user."


async def ask_user(ctx, tool_name: str, arguments: dict, verdict: Verdict) -> tuple[str, str | None]:
    """('once' | 'exact' | 'tool' | 'deny', reason). Uses ``select`` for the choices, or
    ``confirm`` (yes: allow once) on a UI that only has that."""
    ui = ctx.ui
    title = f"Allow {describe(tool_name, arguments)}?"
    why = f" (rule: ask {verdict.rule})" if verdict.rule is not None else ""
    key = call_key(tool_name, arguments)
    select = getattr(ui, "select", None)
    if select is None:
        return ("once" if await ui.confirm(title, f"The model wants to run this{why}.") else "deny"), None
    exact = f"Allow {tool_name} `{key}` for this session" if key is not None else None
    every = f"Allow every {tool_name} call for this session"
    options = [ALLOW_ONCE, *([exact] if exact else []), every, DENY, DENY_WITH_REASON]
    choice = await select(title + why, options)
    if choice == ALLOW_ONCE:
        return "once", None
    if choice is not None and choice == exact:
        return "exact", None
    if choice == every:
        return "tool", None
    if choice == DENY_WITH_REASON:
        reason = await ui.input("Why? The model reads this.", "")
        return "deny", (reason or "").strip() or None
    return "deny", None


@hookimpl
async def before_tool_call(event, ctx):
    from pi_core import ToolCallDecision

    current = state(ctx)
    tool, args = event.tool_name, event.arguments
    verdict = current.policy.verdict(tool, args, ctx.cwd)
    if verdict.action == "allow":
        return None
    if verdict.action == "deny":
        return ToolCallDecision(block=True, reason=denial(verdict, tool))
    key = call_key(tool, args)
    if (tool, None) in current.allowed or (key is not None and (tool, key) in current.allowed):
        return None
    if not getattr(ctx.ui, "has_ui", True):
        return ToolCallDecision(block=True, reason=(
            f"Permission denied: {describe(tool, args)} needs the user's approval and there is no "
            f"one to ask in this mode. The user can allow it in settings.json under "
            f"'{SETTINGS_KEY}.allow'."))
    answer, reason = await ask_user(ctx, tool, args, verdict)
    if answer == "exact":
        current.allowed.add((tool, key))
    elif answer == "tool":
        current.allowed.add((tool, None))
    elif answer == "deny":
        text = f"The user denied this {tool} call."
        text += f" They said: {reason}" if reason else " Do not retry it; ask the user how to go on."
        return ToolCallDecision(block=True, reason=text)
    return None


@hookimpl
def session_start(event, ctx):
    """A new, resumed or forked session starts with no remembered answers (and the
    settings as they are now)."""
    _states.pop(ctx, None)


def _show(current: SessionState) -> str:
    lines = [f"default: {current.policy.default}"]
    for rule in current.policy.rules:
        lines.append(f"{rule.action} {rule} ({rule.source})" + (f": {rule.reason}" if rule.reason else ""))
    for tool, key in sorted(current.allowed, key=lambda p: (p[0], p[1] or "")):
        lines.append(f"allowed for this session: {tool}" + (f" `{key}`" if key is not None else " (every call)"))
    return "\n".join(lines)


async def _permissions_command(args: str, ctx) -> str:
    current = state(ctx)
    if args.strip() == "reset":
        current.allowed.clear()
        text = "Forgot the answers given in this session."
    elif args.strip():
        text = "Usage: /permissions [reset]"
    else:
        text = _show(current)
    ctx.ui.notify(text, "info")
    return text


@hookimpl
def register_commands(ctx):
    return [Command(name="permissions", description="Show the permission rules (/permissions reset "
                    "forgets this session's answers)", handler=_permissions_command, argument_hint="[reset]")]


__all__ = ["Policy", "Rule", "Verdict", "load_policy", "SETTINGS_KEY"]
