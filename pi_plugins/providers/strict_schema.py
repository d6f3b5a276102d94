"""A tool's parameters as OpenAI's strict mode takes them, the rule pi 1.6 applies to the
tools that ask for schema-constrained arguments (``constrainedSampling`` ``json_schema``):
every property listed in ``required``, an optional one widened to also allow ``null``,
and ``additionalProperties: false`` on every object. A schema strict mode cannot express
(``$ref``, ``oneOf``, a union of objects, a node without a type…) is :class:`NotStrict`,
and the tool goes as it is, unconstrained, as pi 1.6's ``strict: "prefer"`` does."""

from __future__ import annotations

import copy
from typing import Any

_UNSUPPORTED = ("$ref", "$defs", "definitions", "allOf", "oneOf", "patternProperties", "dependentSchemas",
                "dependencies", "unevaluatedProperties", "propertyNames", "contains", "prefixItems", "not",
                "if", "then", "else")


#: The built-in tools whose pi 1.6 definitions ask for schema-constrained arguments where
#: the backend can (``constrainedSampling``); the tool spec carries no such field, so the
#: providers name them (pi 1.6's other tools, and extensions' by default, ask nothing).
CONSTRAINED_TOOLS = frozenset({"read", "bash", "edit", "write"})


class NotStrict(ValueError):
    """The schema has something strict mode does not take."""


def _types(node: dict) -> list:
    kind = node.get("type")
    return [kind] if isinstance(kind, str) else list(kind) if isinstance(kind, list) else []


def _structured(node: Any) -> bool:
    return isinstance(node, dict) and ("object" in _types(node) or "array" in _types(node)
                                       or "properties" in node or "items" in node)


def _allows_null(node: Any) -> bool:
    if not isinstance(node, dict):
        return False
    if "null" in _types(node) or ("const" in node and node["const"] is None):
        return True
    if isinstance(node.get("enum"), list) and None in node["enum"]:
        return True
    return isinstance(node.get("anyOf"), list) and any(_allows_null(v) for v in node["anyOf"])


def _tighten(node: Any, unsupported: Any = None) -> None:
    if not isinstance(node, dict):
        raise NotStrict("boolean schemas are unsupported")
    for key in _UNSUPPORTED:
        if key in node:
            raise NotStrict(f"{key} schemas are unsupported")
    for key, value in node.items() if unsupported is not None else ():
        if unsupported(key, value):
            raise NotStrict(f"{key}: {value!r} is unsupported")
    if "type" not in node and "anyOf" not in node and "enum" not in node:
        raise NotStrict("schemas without a type are unsupported")
    if "anyOf" in node:
        variants = node["anyOf"]
        if not isinstance(variants, list) or not variants:
            raise NotStrict("anyOf must contain at least one schema")
        for variant in variants:
            if _structured(variant):
                raise NotStrict("object and array unions are unsupported")
            _tighten(variant, unsupported)
    if "items" in node:
        if isinstance(node["items"], list):
            raise NotStrict("tuple schemas are unsupported")
        _tighten(node["items"], unsupported)
    if node.get("type") != "object":
        if "properties" in node:
            raise NotStrict("properties require type object")
        return
    if node.get("additionalProperties", False) is not False:
        raise NotStrict("schema-valued or true additionalProperties is unsupported")
    properties = node.get("properties", {})
    if not isinstance(properties, dict):
        raise NotStrict("object properties must be a schema map")
    required = node.get("required", [])
    if not isinstance(required, list) or not all(isinstance(k, str) for k in required):
        raise NotStrict("object required must be a string array")
    if any(k not in properties for k in required):
        raise NotStrict("required contains an unknown property")
    for key, value in properties.items():
        _tighten(value, unsupported)
        if key not in required and not _allows_null(value):
            properties[key] = {"anyOf": [value, {"type": "null"}]}
    node["required"] = list(properties)
    node["additionalProperties"] = False


def strict_schema(schema: Any, unsupported: Any = None) -> dict:
    """A strict copy of ``schema`` (the original is left as it was), or :class:`NotStrict`;
    ``unsupported(key, value)`` names more keywords a provider's strict mode refuses."""
    copied = copy.deepcopy(schema)
    if not isinstance(copied, dict) or copied.get("type") != "object":
        raise NotStrict("root schema must have type object")
    _tighten(copied, unsupported)
    return copied
