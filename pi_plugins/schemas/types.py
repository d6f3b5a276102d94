"""Small builders of JSON Schema pieces, so each schema module reads as the file it
describes."""

from __future__ import annotations

from typing import Any

STRING: dict[str, Any] = {"type": "string"}
BOOLEAN: dict[str, Any] = {"type": "boolean"}
NUMBER: dict[str, Any] = {"type": "number"}
STRINGS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}


def one_of(*values: Any) -> dict[str, Any]:
    return {"enum": list(values)}


def either(*schemas: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": list(schemas)}


def integer(minimum: int | None = 0, maximum: int | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"type": "integer"}
    if minimum is not None:
        found["minimum"] = minimum
    if maximum is not None:
        found["maximum"] = maximum
    return found


def obj(properties: dict[str, Any], *, required: list[str] | None = None, closed: bool = False,
        description: str | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        found["required"] = required
    if closed:
        found["additionalProperties"] = False
    if description:
        found["description"] = description
    return found


def map_of(values: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": values}


def described(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {**schema, "description": description}
