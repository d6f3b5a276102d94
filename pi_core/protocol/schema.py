"""Tool parameters, declared once: the JSON Schema sent to the model and the validation
of what the model sends back both come from the same declaration.

A declaration is either a JSON Schema dict or an attrs class (its fields become the
schema's properties; a field's ``metadata={"description": ...}`` describes it). Like pi,
validation first coerces scalars the model sent as strings ("5" for an integer), then
checks the schema and reports every problem at once, so the model can fix its call."""

from __future__ import annotations

import json
import types
import typing
from typing import TYPE_CHECKING, Any, Literal

import attrs

if TYPE_CHECKING:  # imported on first use (see validate)
    import jsonschema.protocols

_SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean"}


class ArgumentsError(ValueError):
    """Tool arguments that do not match the tool's parameters."""


def schema_of(declaration: Any) -> dict:
    """The JSON Schema of a parameter declaration (dict returned as is)."""
    if isinstance(declaration, dict):
        return declaration
    if attrs.has(declaration):
        return _object_schema(declaration)
    raise TypeError(f"parameters must be a JSON Schema dict or an attrs class, not {declaration!r}")


def _object_schema(cls: type) -> dict:
    hints = typing.get_type_hints(cls)
    properties, required = {}, []
    for a in attrs.fields(cls):
        prop = _type_schema(hints.get(a.name, Any))
        if "description" in a.metadata:
            prop = {**prop, "description": a.metadata["description"]}
        properties[a.name] = prop
        if a.default is attrs.NOTHING:
            required.append(a.name)
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def _type_schema(tp: Any) -> dict:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp in _SCALARS:
        return {"type": _SCALARS[tp]}
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        if len(options) == 1:
            return _type_schema(options[0])
        return {"anyOf": [_type_schema(a) for a in options]}
    if origin in (list, tuple, set) or tp in (list, tuple, set):
        return {"type": "array", "items": _type_schema(args[0]) if args else {}}
    if origin is dict or tp is dict:
        return {"type": "object"}
    if attrs.has(tp):
        return _object_schema(tp)
    return {}


def _coerce(schema: dict, value: Any) -> Any:
    """Turn strings into the scalars the schema asks for, where they parse cleanly."""
    kind = schema.get("type")
    if isinstance(value, str):
        try:
            if kind == "integer" and value.strip().lstrip("-").isdigit():
                return int(value)
            if kind == "number":
                return float(value) if "." in value or "e" in value.lower() else int(value)
            if kind == "boolean" and value in ("true", "false"):
                return value == "true"
            if kind in ("object", "array") and value.strip()[:1] in "{[":
                return json.loads(value)
        except ValueError:
            return value
        return value
    if kind == "object" and isinstance(value, dict):
        props = schema.get("properties", {})
        return {k: _coerce(props[k], v) if k in props else v for k, v in value.items()}
    if kind == "array" and isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_coerce(schema["items"], v) for v in value]
    return value


class Parameters:
    """A compiled parameter declaration: ``schema`` for the model, ``validate`` for calls."""

    def __init__(self, declaration: Any):
        self.declaration = declaration
        self.schema = schema_of(declaration)
        self._validator: jsonschema.protocols.Validator | None = None

    def validate(self, arguments: Any) -> Any:
        """Validated arguments: a dict, or an instance of the declared attrs class.
        Raises :class:`ArgumentsError` listing every problem."""
        if not isinstance(arguments, dict):
            raise ArgumentsError(f"arguments must be a JSON object, got {type(arguments).__name__}")
        arguments = _coerce(self.schema, arguments)
        if self._validator is None:
            import jsonschema  # imported on first use: start-up stays fast

            cls = jsonschema.validators.validator_for(self.schema)
            self._validator = cls(self.schema)
        problems = sorted(self._validator.iter_errors(arguments), key=lambda e: list(e.path))
        if problems:
            lines = [f"  - {'/'.join(map(str, p.path)) or '(root)'}: {p.message}" for p in problems]
            raise ArgumentsError("\n".join(lines))
        if isinstance(self.declaration, dict):
            return arguments
        import cattrs

        return cattrs.structure(arguments, self.declaration)
