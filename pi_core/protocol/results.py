"""Hook results as plugin authors write them: the documented object or its dict shape.

Each function takes one handler's result and returns the documented object, or raises
``TypeError`` / ``ValueError`` saying what was wrong. The specs name them (``result=`` on
their dispatch marker), so the dispatcher coerces every handler's result as it comes:
a malformed one is reported with the plugin's name and counts as "no opinion", never
taking the run down. Dict shapes follow pi's where pi has one (``{"block": True,
"reason": ...}``, ``{"compaction": {...}}``, ``{"result": {"output": ...}}``), with
Python's snake_case spellings accepted beside pi's camelCase."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from pi_core.protocol import events
from pi_core.protocol.events import ToolCallDecision
from pi_core.protocol.messages import BashExecutionMessage

#: A field's kind: the test its value must pass, and what an error says it must be.
_KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "str": (lambda v: isinstance(v, str), "a string"),
    "int": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
    "dict": (lambda v: isinstance(v, dict), "a dict"),
    "str|dict": (lambda v: isinstance(v, (str, dict)), "a string or a dict"),
    "function": (callable, "an async function"),
    "any": (lambda v: True, ""),
}


def _fields(value: Any, what: str, spec: dict[str, tuple[str, ...]]) -> dict[str, Any]:
    """The documented object's fields from a dict result: ``spec`` maps each field to its
    kind and its spellings (the first one pi's). Unknown keys are refused; a key absent
    or None is left out, so the object's default applies."""
    if not isinstance(value, dict):
        raise TypeError(f"{what} must be a dict or the documented object, not {type(value).__name__}")
    allowed = {name for _, *names in spec.values() for name in names}
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise ValueError(f"{what}: unknown key(s) {', '.join(map(repr, unknown))} "
                         f"(expected some of {', '.join(sorted(allowed))})")
    fields = {}
    for field_name, (kind, *names) in spec.items():
        found = next((value[name] for name in names if name in value), None)
        if found is None:
            continue
        test, wanted = _KINDS[kind]
        if not test(found):
            raise TypeError(f"{names[0]!r} must be {wanted}, not {found!r}")
        fields[field_name] = found
    return fields


_CANCEL = ("bool", "cancel")
_FROM_HOOK = ("bool", "fromHook", "from_hook")


def cancel_decision(value: Any) -> Any:
    """``session_before_switch`` / ``_fork``: any object with ``cancel``, or ``{"cancel": bool}``."""
    if not isinstance(value, dict):
        if not hasattr(value, "cancel"):
            raise TypeError(f"expected an object with 'cancel' or {{'cancel': bool}}, not {type(value).__name__}")
        return value
    return events.CancelDecision(**_fields(value, "a decision", {"cancel": _CANCEL}))


def run_decision(value: Any) -> Any:
    """``after_agent_run``: :class:`RunDecision` or ``{"runAgain": bool}``."""
    if isinstance(value, events.RunDecision):
        return value
    return events.RunDecision(**_fields(value, "an after_agent_run result", {"run_again": ("bool", "runAgain")}))


def tool_call_decision(value: Any) -> ToolCallDecision:
    """``before_tool_call``: :class:`ToolCallDecision` or ``{"block", "reason", "arguments"}``."""
    if isinstance(value, ToolCallDecision):
        return value
    return ToolCallDecision(**_fields(value, "a before_tool_call result", {
        "block": ("bool", "block"), "reason": ("str", "reason"),
        "arguments": ("dict", "arguments", "input")}))


def compaction_result(value: Any) -> events.CompactionResult:
    """A summary: :class:`CompactionResult` or ``{"summary", "firstKeptEntryId"?,
    "tokensBefore"?, "details"?}`` (missing places are filled from the event's plan)."""
    if isinstance(value, events.CompactionResult):
        return value
    fields = _fields(value, "a compaction summary", {
        "summary": ("str", "summary"),
        "first_kept_entry_id": ("str", "firstKeptEntryId", "first_kept_entry_id"),
        "tokens_before": ("int", "tokensBefore", "tokens_before"), "details": ("any", "details")})
    if not fields.get("summary", "").strip():
        raise ValueError("a compaction summary needs a non-empty 'summary' string")
    return events.CompactionResult(**{"first_kept_entry_id": "", "tokens_before": 0, **fields})


def compaction_decision(value: Any) -> events.CompactionDecision:
    """``session_before_compact``: :class:`CompactionDecision`, or ``{"cancel": True}``,
    or pi's ``{"compaction": {...}}``, or a summary dict itself (``{"summary": ...}``)."""
    if isinstance(value, events.CompactionDecision):
        if value.result is not None and not isinstance(value.result, events.CompactionResult):
            return attrs.evolve(value, result=compaction_result(value.result))
        return value
    if isinstance(value, events.CompactionResult) or isinstance(value, dict) and "summary" in value:
        return events.CompactionDecision(result=compaction_result(value))
    fields = _fields(value, "a session_before_compact result", {
        "cancel": _CANCEL, "result": ("any", "compaction", "result"),
        "generate": ("function", "generate"), "from_hook": _FROM_HOOK})
    if "result" in fields:
        fields["result"] = compaction_result(fields["result"])
    return events.CompactionDecision(**fields)


def tree_decision(value: Any) -> events.TreeDecision:
    """``session_before_tree``: :class:`TreeDecision`, or ``{"cancel": True}``, or
    ``{"summary": "..." | {"summary", "details"}}`` (pi's shape)."""
    if isinstance(value, events.TreeDecision):
        return value
    fields = _fields(value, "a session_before_tree result", {
        "cancel": _CANCEL, "summary": ("str|dict", "summary"), "details": ("any", "details"),
        "generate": ("any", "generate"), "from_hook": _FROM_HOOK})
    if isinstance(fields.get("summary"), dict):
        fields |= {"summary": None, **_fields(fields["summary"], "a branch summary", {
            "summary": ("str", "summary"), "details": ("any", "details")})}
    return events.TreeDecision(**fields)


_BASH_RESULT = {"output": ("str", "output"), "exit_code": ("int", "exitCode", "exit_code"),
                "cancelled": ("any", "cancelled"), "truncated": ("any", "truncated"),
                "full_output_path": ("any", "fullOutputPath", "full_output_path")}


def user_bash_decision(value: Any) -> events.UserBashDecision:
    """``user_bash``: a :class:`pi_core.protocol.messages.BashExecutionMessage`, ``{"cancel": True}``,
    or pi's ``{"result": {"output", "exitCode", "cancelled"?, "truncated"?}}``."""
    if isinstance(value, events.UserBashDecision):
        return value
    if isinstance(value, BashExecutionMessage):
        return events.UserBashDecision(message=value)
    if isinstance(value, dict) and "operations" in value:
        raise ValueError("'operations' is not supported here: return {'result': {...}} "
                         "or use the execution_environment hook")
    fields = _fields(value, "a user_bash result", {"cancel": _CANCEL, "result": ("dict", "result")})
    if "result" in fields:
        fields["result"] = _fields(fields["result"], "a user_bash result", _BASH_RESULT)
    return events.UserBashDecision(**fields)


def same_role_message(value: Any, previous: Any) -> Any:
    """``message_end``: a replacement message (or its JSON dict) of the same role."""
    from pi_core.protocol.codec import DecodeError, message_from_json

    if isinstance(value, dict):
        try:
            value = message_from_json(value)
        except (DecodeError, ValueError, TypeError, KeyError) as exc:
            raise ValueError(f"not a message: {exc}") from None
    role = getattr(value, "role", None)
    if role is None:
        raise TypeError(f"expected a message, not {type(value).__name__}")
    if role != previous.role:
        raise ValueError(f"a {previous.role!r} message may only be replaced by a "
                         f"{previous.role!r} message, not a {role!r} one; the original is kept")
    return value
