"""Tools: what the model can call. A tool declares its parameters once (see
:mod:`pi_core.protocol.schema`), whether it may run beside others, and how it executes."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any, Literal

from pi_core.protocol.messages import ImageContent, TextContent, UserContent
from pi_core.protocol.records import field, record
from pi_core.protocol.schema import Parameters
from pi_core.protocol.signal import AbortSignal

ExecutionMode = Literal["parallel", "sequential"]
Exposure = Literal["direct", "model-only", "codemode", "deferred", "hidden"]


@record
class ToolResult:
    """What a tool returns. ``details`` is for programs (UI, session), never the model.
    ``terminate`` set on every result of a batch ends the run after that batch."""

    content: list[UserContent] = field(factory=list)
    details: Any = None
    is_error: bool = False
    terminate: bool = False
    usage: Any = None  # pi 1.6: the tool's own model work (a subagent's), in the session's totals
    structured_content: Any = None  # pi 1.6's structuredContent: what scripts get (see Tool.output_schema)

    @classmethod
    def text(cls, text: str, details: Any = None, *, is_error: bool = False) -> ToolResult:
        return cls(content=[TextContent(text)], details=details, is_error=is_error)

    @classmethod
    def error(cls, message: str) -> ToolResult:
        return cls.text(message, {}, is_error=True)


@record
class ToolRun:
    """What a running tool may use besides its arguments."""

    tool_call_id: str
    signal: AbortSignal
    ctx: Any = None
    on_update: Callable[[ToolResult], None] | None = field(default=None, repr=False)

    def update(self, partial: ToolResult | str) -> None:
        """Report progress; it reaches ``tool_execution_update`` hooks and the UI."""
        if self.on_update is not None:
            self.on_update(as_result(partial))


def as_result(value: Any) -> ToolResult:
    """Accept what a tool function may return: a ToolResult, a string, or content blocks."""
    if isinstance(value, ToolResult):
        return value
    if value is None:
        return ToolResult()
    if isinstance(value, str):
        return ToolResult.text(value)
    if isinstance(value, (TextContent, ImageContent)):
        return ToolResult(content=[value])
    if isinstance(value, list):
        return ToolResult(content=value)
    raise TypeError(f"a tool returned {type(value).__name__}; return a ToolResult or a string")


FileEffects = dict  # {"read": [paths], "modified": [paths]}


def _short(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@record(eq=False)
class Tool:
    """A tool (docs/plugins.md, "Tools and their hooks"): give ``function`` (``async def
    f(args, run)``) or override :meth:`execute`. ``render_call`` / ``render_result`` draw it
    in the chat; ``prepare_arguments`` turns an older call's arguments into the current shape.
    ``exposure`` (pi 1.6's): ``direct``, ``model-only`` (not from scripts), ``codemode`` and
    ``deferred`` (declared once ``tool_search`` loads it), ``hidden`` (registered, unreachable).
    ``namespace``, ``output_schema``, ``reaches_tools``, ``annotations``: pi 1.6's, docs/plugins.md."""

    name: str
    description: str = ""
    parameters: Any = field(factory=lambda: {"type": "object", "properties": {}})
    function: Callable[..., Any] | None = field(default=None, repr=False)
    label: str = ""
    execution_mode: ExecutionMode = "parallel"
    default_active: bool = True
    summarize_function: Callable[[dict], str] | None = field(default=None, alias="summarize", repr=False)
    files_function: Callable[[dict], FileEffects] | None = field(default=None, alias="files", repr=False)
    prompt_snippet: str | None = None
    prompt_guidelines: list[str] = field(factory=list, converter=lambda v: [v] if isinstance(v, str) else list(v or []))
    render_call: Callable[..., list[str]] | None = field(default=None, repr=False)
    render_result: Callable[..., list[str]] | None = field(default=None, repr=False)
    prepare_arguments: Callable[[Any], Any] | None = field(default=None, repr=False)
    exposure: Exposure = "direct"
    namespace: dict | None = None
    output_schema: dict | None = None
    reaches_tools: Callable[[Any], str | list[str]] | None = field(default=None, repr=False)
    annotations: dict | None = None  # MCP's readOnlyHint, destructiveHint, idempotentHint, openWorldHint
    _compiled: Parameters | None = field(default=None, init=False, repr=False)

    def summarize(self, args: dict) -> str:
        """One line saying what a call does (``read src/app.py:10-40``)."""
        if self.summarize_function is not None:
            return self.summarize_function(args or {})
        return f"{self.name} {_short(args, 200)}" if isinstance(args, dict) and args else self.name

    def files(self, args: dict) -> FileEffects:
        return (self.files_function(args or {}) or {}) if self.files_function is not None else {}

    @property
    def compiled(self) -> Parameters:
        if self._compiled is None:
            self._compiled = Parameters(self.parameters)
        return self._compiled

    @property
    def schema(self) -> dict:
        """The JSON Schema of the parameters, as sent to the model."""
        return self.compiled.schema

    def validate(self, arguments: Any) -> Any:
        if self.prepare_arguments is not None:
            arguments = self.prepare_arguments(arguments)
        return self.compiled.validate(arguments)

    async def execute(self, args: Any, run: ToolRun) -> ToolResult | str:
        if self.function is None:
            raise NotImplementedError(f"tool {self.name!r} has no function; override execute()")
        result = self.function(args, run)
        if inspect.isawaitable(result):
            result = await result
        return result


def tool(name: str | None = None, *, description: str | None = None, parameters: Any = None,
         **options: Any) -> Callable[[Callable[..., Any]], Tool]:
    """Make a :class:`Tool` from a function; its docstring is the default description."""

    def wrap(function: Callable[..., Any]) -> Tool:
        return Tool(name=name or function.__name__, description=description or inspect.getdoc(function) or "",
                    parameters=parameters if parameters is not None else {"type": "object", "properties": {}},
                    function=function, **options)

    return wrap
