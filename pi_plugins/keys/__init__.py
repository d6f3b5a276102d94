"""Keys stay out of the model's reach (the rules: :mod:`.rules`): every tool's result
has the keys pi holds redacted before it becomes a message (so before the model, the
session file and an export see it), and a wrong ``toolEnvironment`` setting is reported
at start-up (``settings_problems``).

A command's output is redacted where it is collected (the bash tool, ``!cmd``,
``ctx.exec``: :mod:`pi_plugins.tools.output`), and its environment leaves the keys out
(:mod:`pi_plugins.tools.environment`); this plugin covers what every other tool gives
back (``read`` of ``~/.pi/agent/auth.json``, a key in an error), text and details alike.
It runs last (``trylast``), after every other plugin's ``after_tool_call``, and fails
closed: a result it cannot copy becomes its redacted text alone. What is redacted
and how to change it: docs/security.md; the rules: :mod:`pi_plugins.keys.rules`.
"""

from __future__ import annotations

from typing import Any

from pi_core import hookimpl


def redact_value(value: Any, keys: dict[str, str]) -> Any:
    """``value`` with every string in it (through dicts, lists, attrs classes such as
    text content) redacted; the same object when nothing changed."""
    from pi_plugins.keys.rules import redact

    if isinstance(value, str):
        return redact(value, keys)
    if isinstance(value, dict):
        changed = {k: redact_value(v, keys) for k, v in value.items()}
        return value if all(changed[k] is value[k] for k in value) else changed
    if isinstance(value, (list, tuple)):
        items = [redact_value(v, keys) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else type(value)(items)
    import copy

    import attrs

    from pi_core.protocol.messages import TextContent

    if isinstance(value, TextContent):
        text = redact(value.text, keys)
        if text == value.text:
            return value
        copied = copy.copy(value)
        copied.text = text
        return copied
    if attrs.has(type(value)):
        fields = {(f.alias or f.name): getattr(value, f.name)
                  for f in attrs.fields(type(value)) if f.init}
        changed = {name: redact_value(v, keys) for name, v in fields.items()}
        if any(changed[name] is not fields[name] for name in fields):
            return attrs.evolve(value, **{n: v for n, v in changed.items() if v is not fields[n]})
    return value


def _text_only(result: Any, keys: dict[str, str]) -> Any:
    """The result as redacted text alone: what is left when a result holds something
    :func:`redact_value` cannot copy. A key is never let through for that."""
    from pi_core.protocol.messages import text_of
    from pi_core.protocol.tools import ToolResult
    from pi_plugins.keys.rules import redact

    return ToolResult.text(redact(text_of(result.content), keys), None, is_error=result.is_error)


@hookimpl(trylast=True)
def after_tool_call(result, event, ctx):
    from pi_plugins.keys.rules import held_keys

    keys = held_keys()
    if not keys:
        return None
    try:
        content = redact_value(result.content, keys)
        details = redact_value(result.details, keys)
    except Exception:  # fail closed: the text, redacted, and nothing else
        return _text_only(result, keys)
    if content is result.content and details is result.details:
        return None
    import attrs

    return attrs.evolve(result, content=content, details=details)



@hookimpl
def settings_problems(settings):
    """What is wrong with ``toolEnvironment`` (:func:`pi_plugins.keys.rules.tool_environment`)."""
    from pi_plugins.keys.rules import tool_environment

    return tool_environment(settings)[2]
