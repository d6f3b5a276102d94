"""Grammar-constrained tools (pi 1.6's ``constrainedSampling: {type: "grammar"}`` and the
model compat ``supportsOpenAIGrammarTools``, off unless the catalogue or models.json says).

A tool whose arguments are one required string property can ask the model to write that
string to a grammar (``variants``: ``openai_lark``, else ``openai_regex``). Where the
model's compat says it takes such tools, the OpenAI APIs get it as a ``custom`` tool with
the grammar instead of a function, the model's call comes back as raw text (a ``custom``
tool call, its ``input``), and the call's arguments are ``{<property>: <text>}``; the
history replays those calls (and, on the Responses API, their results) as custom ones.
Elsewhere the tool goes as a function, as any other. A grammar tool without a grammar, or
whose parameters are not one required string, fails the request, as in pi 1.6.

The tool specs the providers get carry no such field (pi's tool definitions do), so a
plugin declares its tool's grammar here by name (:func:`declare`).
"""

from __future__ import annotations

import json
from typing import Any

#: tool name -> pi 1.6's ``constrainedSampling`` object of a grammar tool
_DECLARED: dict[str, dict] = {}


def declare(name: str, constrained_sampling: dict | None) -> None:
    """Say (or, with None, unsay) that tool ``name`` asks for grammar-constrained input:
    ``{"type": "grammar", "variants": {"openai_lark": ..., "openai_regex": ...}}``."""
    if constrained_sampling is None:
        _DECLARED.pop(name, None)
    else:
        _DECLARED[name] = constrained_sampling


def supported(compat: dict) -> bool:
    """``compat``: the model's (resolved) compat settings."""
    return compat.get("supportsOpenAIGrammarTools") is True


def _input_property(schema: Any) -> str:
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise ValueError("grammar constrained sampling requires an object parameter schema")
    required = schema.get("required")
    if not isinstance(required, list) or len(required) != 1 or not isinstance(required[0], str):
        raise ValueError("grammar constrained sampling requires exactly one required string property")
    prop = required[0]
    found = (schema.get("properties") or {}).get(prop)
    if not found:
        raise ValueError(f"grammar constrained sampling requires a properties entry for {prop}")
    if found.get("type") != "string":
        raise ValueError(f"grammar constrained sampling property {prop} must have type string")
    return prop


def grammar(name: str, schema: Any, compat: dict) -> tuple[str, str, str] | None:
    """``(syntax, definition, input property)`` where tool ``name`` goes as a grammar tool
    to a model of these ``compat`` settings, else None; a grammar tool that cannot be one raises ValueError."""
    config = _DECLARED.get(name)
    if not config or config.get("type") != "grammar" or not supported(compat):
        return None
    variants = config.get("variants") or {}
    lark, regex = variants.get("openai_lark"), variants.get("openai_regex")
    has_lark = isinstance(lark, str) and bool(lark.strip())
    if not has_lark and not (isinstance(regex, str) and regex.strip()):
        raise ValueError(f'Tool "{name}" cannot use grammar constrained sampling: '
                         "no supported grammar variant was provided.")
    try:
        prop = _input_property(schema)
    except ValueError as exc:
        raise ValueError(f'Tool "{name}" cannot use grammar constrained sampling: {exc}.') from None
    return ("lark", str(lark), prop) if has_lark else ("regex", str(regex), prop)


def _fields(tool: Any) -> tuple[str, str | None, Any]:
    if isinstance(tool, dict):
        return str(tool.get("name")), tool.get("description"), tool.get("parameters")
    return tool.name, tool.description, tool.parameters


def input_properties(tools: list, compat: dict) -> dict[str, str]:
    """Tool name -> the property its raw input goes to, for the grammar tools of a request."""
    found = {}
    for tool in tools:
        name, _, schema = _fields(tool)
        resolved = grammar(name, schema, compat)
        if resolved is not None:
            found[name] = resolved[2]
    return found


def custom_tool(tool: Any, compat: dict, *, nested: bool) -> dict | None:
    """The tool as a ``custom`` grammar tool (Chat Completions: ``nested`` under
    ``custom``; Responses: flat), or None where it goes as a function."""
    name, description, schema = _fields(tool)
    resolved = grammar(name, schema, compat)
    if resolved is None:
        return None
    syntax, definition, _ = resolved
    if nested:
        return {"type": "custom", "custom": {"name": name, "description": description, "format": {
            "type": "grammar", "grammar": {"syntax": syntax, "definition": definition}}}}
    return {"type": "custom", "name": name, "description": description,
            "format": {"type": "grammar", "syntax": syntax, "definition": definition}}


def call_input(call: Any, prop: str) -> str:
    """A replayed grammar tool call's raw input (its arguments' one property)."""
    value = (call.arguments or {}).get(prop)
    if not isinstance(value, str):
        raise ValueError(f'Grammar tool call "{call.name}" requires argument "{prop}" to be a string.')
    return value


class RawInput:
    """A streaming custom tool call's raw input as the JSON text of its arguments
    (``{"<property>":"<escaped input>"}``), piece by piece, for the tool call's deltas."""

    def __init__(self, prop: str):
        self.prop, self.text, self.started, self.closed = prop, "", False, False

    def _opening(self) -> str:
        if self.started:
            return ""
        self.started = True
        return "{" + json.dumps(self.prop, ensure_ascii=False) + ':"'

    def add(self, delta: str) -> str | None:
        """The JSON piece for ``delta`` (None for an empty one)."""
        if self.closed:
            raise ValueError(f'grammar tool input for property "{self.prop}" changed after it was closed')
        if not delta:
            return None
        self.text += delta
        return self._opening() + json.dumps(delta, ensure_ascii=False)[1:-1]

    def close(self, final: str | None = None) -> str | None:
        """The rest of the JSON text; ``final``, the whole input where the server sends it,
        continues what streamed. None once closed with the same input."""
        if self.closed:
            if final is None or final == self.text:
                return None
            raise ValueError(f'grammar tool input for property "{self.prop}" changed after it was closed')
        if final is not None and not final.startswith(self.text):
            raise ValueError(f'grammar tool input for property "{self.prop}" changed non-monotonically')
        rest = "" if final is None else final[len(self.text):]
        if final is not None:
            self.text = final
        self.closed = True
        return self._opening() + json.dumps(rest, ensure_ascii=False)[1:-1] + '"}'
