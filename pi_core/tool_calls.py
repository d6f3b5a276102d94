"""A tool call on its way to running: the tool found, its arguments validated (pi's
words when they are not) and ``before_tool_call`` asked; or its answer already known."""

from __future__ import annotations

import json
from typing import Any

from attrs import asdict, define, has

from pi_core.protocol.messages import ToolCall
from pi_core.protocol.schema import ArgumentsError
from pi_core.protocol.tools import Tool, ToolResult


@define
class PreparedCall:
    """A tool call ready to run, or (``immediate``) one already answered."""

    call: ToolCall
    tool: Tool | None = None
    args: Any = None
    immediate: ToolResult | None = None


def arguments_dict(args: Any, fallback: dict) -> dict:
    """Validated arguments as the plain dict ``before_tool_call`` sees."""
    return args if isinstance(args, dict) else asdict(args) if has(type(args)) else dict(fallback)


def validation_failed(call: ToolCall, exc: ArgumentsError) -> str:
    """pi's words for arguments the tool's schema refuses, with what the model sent."""
    received = json.dumps(call.arguments, indent=2, ensure_ascii=False, default=str)
    return f'Validation failed for tool "{call.name}":\n{exc}\n\nReceived arguments:\n{received}'
