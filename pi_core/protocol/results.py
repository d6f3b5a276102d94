"""Hook results as plugin authors write them: the documented object or its dict shape.

Each function takes one handler's result and returns the documented object, or raises
``TypeError`` / ``ValueError`` saying what was wrong. The specs name them (``result=`` on
their dispatch marker), so the dispatcher coerces every handler's result as it comes:
a malformed one is reported with the plugin's name and counts as "no opinion", never
taking the run down. Dict shapes follow pi's where pi has one (``{"block": True,
"reason": ...}``, ``{"compaction": {...}}``, ``{"result": {"output": ...}}``), with
Python's snake_case spellings accepted beside pi's camelCase.
"""

from __future__ import annotations

from typing import Any

import attrs

from pi_core.protocol.events import (
    CancelDecision,
    CompactionDecision,
    CompactionResult,
    ToolCallDecision,
    TreeDecision,
    UserBashDecision,
)


def _pick(data: dict, *names: str, default: Any = None) -> Any:
    for name in names:
        if name in data:
            return data[name]
    return default


def _check_keys(data: dict, allowed: set[str], what: str) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ValueError(f"{what}: unknown key(s) {', '.join(map(repr, unknown))} "
                         f"(expected some of {', '.join(sorted(allowed))})")


def _dict(value: Any, what: str) -> dict:
    if not isinstance(value, dict):
        raise TypeError(f"{what} must be a dict or the documented object, not {type(value).__name__}")
    return value


def _bool(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name!r} must be true or false, not {value!r}")
    return value


def cancel_decision(value: Any) -> Any:
    """``session_before_switch`` / ``_fork``: any object with ``cancel``, or ``{"cancel": bool}``."""
    if not isinstance(value, dict):
        if not hasattr(value, "cancel"):
            raise TypeError(f"expected an object with 'cancel' or {{'cancel': bool}}, not {type(value).__name__}")
        return value
    _check_keys(value, {"cancel"}, "decision")
    return CancelDecision(cancel=_bool(value.get("cancel", False), "cancel"))


def run_decision(value: Any) -> Any:
    """``after_agent_run``: :class:`RunDecision` or ``{"runAgain": bool}``."""
    from pi_core.protocol.events import RunDecision

    if isinstance(value, RunDecision):
        return value
    if not isinstance(value, dict):
        raise TypeError(f"expected a RunDecision or {{'runAgain': bool}}, not {type(value).__name__}")
    _check_keys(value, {"runAgain"}, "decision")
    return RunDecision(run_again=_bool(value.get("runAgain", False), "runAgain"))


def tool_call_decision(value: Any) -> ToolCallDecision:
    """``before_tool_call``: :class:`ToolCallDecision` or ``{"block", "reason", "arguments"}``."""
    if isinstance(value, ToolCallDecision):
        return value
    data = _dict(value, "a before_tool_call result")
    _check_keys(data, {"block", "reason", "arguments", "input"}, "before_tool_call result")
    arguments = _pick(data, "arguments", "input")
    if arguments is not None and not isinstance(arguments, dict):
        raise TypeError(f"'arguments' must be a dict, not {type(arguments).__name__}")
    reason = data.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise TypeError("'reason' must be a string")
    return ToolCallDecision(block=_bool(data.get("block", False), "block"), reason=reason,
                            arguments=arguments)


def compaction_result(value: Any) -> CompactionResult:
    """A summary: :class:`CompactionResult` or ``{"summary", "firstKeptEntryId"?,
    "tokensBefore"?, "details"?}`` (missing places are filled from the event's plan)."""
    if isinstance(value, CompactionResult):
        return value
    data = _dict(value, "a compaction summary")
    _check_keys(data, {"summary", "firstKeptEntryId", "first_kept_entry_id", "tokensBefore",
                       "tokens_before", "details"}, "compaction summary")
    summary = data.get("summary")
    if not isinstance(summary, str) or not summary.strip():
        raise ValueError("a compaction summary needs a non-empty 'summary' string")
    first = _pick(data, "firstKeptEntryId", "first_kept_entry_id", default="")
    tokens = _pick(data, "tokensBefore", "tokens_before", default=0)
    if not isinstance(first, str):
        raise TypeError("'firstKeptEntryId' must be an entry id string")
    if not isinstance(tokens, int) or isinstance(tokens, bool):
        raise TypeError("'tokensBefore' must be an integer")
    return CompactionResult(summary=summary, first_kept_entry_id=first, tokens_before=tokens,
                            details=data.get("details"))


def compaction_decision(value: Any) -> CompactionDecision:
    """``session_before_compact``: :class:`CompactionDecision`, or ``{"cancel": True}``,
    or pi's ``{"compaction": {...}}``, or a summary dict itself (``{"summary": ...}``)."""
    if isinstance(value, CompactionDecision):
        if value.result is not None and not isinstance(value.result, CompactionResult):
            return attrs.evolve(value, result=compaction_result(value.result))
        return value
    if isinstance(value, CompactionResult):
        return CompactionDecision(result=value)
    data = _dict(value, "a session_before_compact result")
    if "summary" in data:
        return CompactionDecision(result=compaction_result(data))
    _check_keys(data, {"cancel", "compaction", "result", "generate", "from_hook", "fromHook"},
                "session_before_compact result")
    given = _pick(data, "compaction", "result")
    generate = data.get("generate")
    if generate is not None and not callable(generate):
        raise TypeError("'generate' must be an async function")
    return CompactionDecision(
        cancel=_bool(data.get("cancel", False), "cancel"),
        result=compaction_result(given) if given is not None else None,
        generate=generate,
        from_hook=_bool(_pick(data, "from_hook", "fromHook", default=True), "from_hook"),
    )


def tree_decision(value: Any) -> TreeDecision:
    """``session_before_tree``: :class:`TreeDecision`, or ``{"cancel": True}``, or
    ``{"summary": "..." | {"summary", "details"}}`` (pi's shape)."""
    if isinstance(value, TreeDecision):
        return value
    data = _dict(value, "a session_before_tree result")
    _check_keys(data, {"cancel", "summary", "details", "generate", "from_hook", "fromHook"},
                "session_before_tree result")
    summary, details = data.get("summary"), data.get("details")
    if isinstance(summary, dict):
        _check_keys(summary, {"summary", "details"}, "branch summary")
        given = summary
        summary, details = given.get("summary"), given.get("details", details)
    if summary is not None and not isinstance(summary, str):
        raise TypeError("'summary' must be a string")
    return TreeDecision(cancel=_bool(data.get("cancel", False), "cancel"), summary=summary,
                        details=details, generate=data.get("generate"),
                        from_hook=_bool(_pick(data, "from_hook", "fromHook", default=True), "from_hook"))


_BASH_KEYS = {"output": ("output",), "exit_code": ("exitCode", "exit_code"),
              "cancelled": ("cancelled",), "truncated": ("truncated",),
              "full_output_path": ("fullOutputPath", "full_output_path")}


def user_bash_decision(value: Any) -> UserBashDecision:
    """``user_bash``: a :class:`pi_core.protocol.messages.BashExecutionMessage`, ``{"cancel": True}``,
    or pi's ``{"result": {"output", "exitCode", "cancelled"?, "truncated"?}}``."""
    from pi_core.protocol.messages import BashExecutionMessage

    if isinstance(value, UserBashDecision):
        return value
    if isinstance(value, BashExecutionMessage):
        return UserBashDecision(message=value)
    data = _dict(value, "a user_bash result")
    if "operations" in data:
        raise ValueError("'operations' is not supported here: return {'result': {...}} "
                         "or use the execution_environment hook")
    _check_keys(data, {"cancel", "result"}, "user_bash result")
    result = data.get("result")
    if result is None:
        return UserBashDecision(cancel=_bool(data.get("cancel", False), "cancel"))
    result = _dict(result, "'result'")
    allowed = {name for names in _BASH_KEYS.values() for name in names}
    _check_keys(result, allowed, "user_bash result")
    fields = {}
    for field_name, names in _BASH_KEYS.items():
        found = _pick(result, *names, default=None)
        if found is not None:
            fields[field_name] = found
    if not isinstance(fields.get("output", ""), str):
        raise TypeError("'output' must be a string")
    code = fields.get("exit_code")
    if code is not None and (not isinstance(code, int) or isinstance(code, bool)):
        raise TypeError("'exitCode' must be an integer")
    return UserBashDecision(cancel=_bool(data.get("cancel", False), "cancel"), result=fields)


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
