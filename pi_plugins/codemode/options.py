"""The ``// @options: {...}`` first line of a script (pi 1.6): ``max_output_tokens``
and ``timeout_ms``, positive integers. Anywhere but the first line it fails the call
before the script runs."""

from __future__ import annotations

import json
import re

from attrs import define

from pi_plugins.codemode.output import DEFAULT_MAX_OUTPUT_TOKENS

_OPTIONS = re.compile(r"^\s*//\s*@options:(.*)$")

_FIELDS = ("max_output_tokens", "timeout_ms")
_LARGEST = 2_147_483_647


class OptionsError(ValueError):
    """An options line pi refuses; the message is the tool result."""


@define
class ScriptOptions:
    max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS
    timeout_ms: int | None = None


def parse_options(code: str) -> ScriptOptions:
    lines = code.split("\n")
    for number, line in enumerate(lines[1:], start=2):
        if _OPTIONS.match(line):
            raise OptionsError(f"The // @options: line must be the first line of the input; found one on line {number}")
    found = _OPTIONS.match(lines[0]) if lines else None
    if found is None:
        return ScriptOptions()
    try:
        given = json.loads(found.group(1))
    except ValueError as exc:
        raise OptionsError("@options must be valid JSON with supported fields `max_output_tokens` and "
                           f"`timeout_ms`: {exc}") from None
    if not isinstance(given, dict):
        raise OptionsError("@options must be a JSON object with supported fields `max_output_tokens` and `timeout_ms`")
    unknown = [key for key in given if key not in _FIELDS]
    if unknown:
        raise OptionsError("@options only supports `max_output_tokens` and `timeout_ms`; got "
                           + ", ".join(f"`{key}`" for key in unknown))
    for key, value in given.items():
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= _LARGEST:
            raise OptionsError(f"@options field `{key}` must be a positive integer up to {_LARGEST}")
    return ScriptOptions(**given)
