"""The unified message protocol: content blocks and messages, as pi shapes them.

Attributes are declared in pi's key order, so new lines are written as pi writes them;
:mod:`pi_core.protocol.codec` maps them to pi's JSON keys and keeps unknown ones."""

from __future__ import annotations

import time
from typing import Any, ClassVar, Literal

from pi_core.protocol.records import field, record


def now_ms() -> int:
    """The current time as Unix milliseconds, pi's message timestamp."""
    return time.time_ns() // 1_000_000


def _filled() -> Any:
    """None for a field every producer fills (an event's, an entry's message), typed as the
    field's type: readers need no None check and the codec reads the plain type."""
    return None


@record
class _Extra:
    """``extra``: keys a newer pi wrote that this version does not know, made when first
    asked for (a resumed session holds ~90,000 objects; an empty dict each was 6 MB)."""

    _extra: dict | None = field(default=None, alias="extra", kw_only=True, repr=False, eq=False)

    @property
    def extra(self) -> dict:
        value = self._extra
        if value is None:
            value = self._extra = {}
        return value

    @extra.setter
    def extra(self, value: dict) -> None:
        self._extra = value


# ---------------------------------------------------------------- content blocks


@record
class _Streamed(_Extra):
    """Text that grows delta by delta while a block streams: deltas are kept as parts and
    joined when read, so a 100,000-delta answer never costs quadratic time."""

    _pending: list[str] | None = field(default=None, init=False, repr=False, eq=False,
                                       metadata={"transient": True})
    _body: ClassVar[str]  # the name of the slot that holds the text

    def append(self, delta: str) -> None:
        if self._pending is None:
            self._pending = [delta]
        else:
            self._pending.append(delta)

    def _flush(self) -> str:
        if self._pending:
            setattr(self, self._body, getattr(self, self._body) + "".join(self._pending))
            self._pending = None
        return getattr(self, self._body)


def _streamed_text(body: str) -> property:
    """The text of a streamed block (its parts joined when read); setting it replaces them."""
    def get(self) -> str:
        return self._flush() if self._pending else getattr(self, body)

    def put(self, value: str) -> None:
        setattr(self, body, value)
        self._pending = None

    return property(get, put)


@record
class TextContent(_Streamed):
    type: Literal["text"] = field(default="text", init=False)
    _text: str = field(default="", alias="text")
    text_signature: str | None = None
    _body = "_text"
    text = _streamed_text("_text")


@record
class ImageContent(_Extra):
    type: Literal["image"] = field(default="image", init=False)
    data: str
    mime_type: str


@record
class ThinkingContent(_Streamed):
    type: Literal["thinking"] = field(default="thinking", init=False)
    _thinking: str = field(default="", alias="thinking")
    thinking_signature: str | None = None
    redacted: bool | None = None
    _body = "_thinking"
    thinking = _streamed_text("_thinking")


@record
class ToolCall(_Extra):
    type: Literal["toolCall"] = field(default="toolCall", init=False)
    id: str
    name: str
    arguments: dict = field(factory=dict)
    thought_signature: str | None = None


@record
class UnknownContent:
    """A content block of a type this version does not know, kept as read."""

    data: dict

    @property
    def type(self) -> str:
        return self.data.get("type", "")


Content = TextContent | ImageContent | ThinkingContent | ToolCall | UnknownContent
UserContent = TextContent | ImageContent | UnknownContent


# ---------------------------------------------------------------- usage


@record
class Cost(_Extra):
    """Dollars spent on one response, by token kind."""

    input: float = 0
    output: float = 0
    cache_read: float = 0
    cache_write: float = 0
    total: float = 0


@record
class Usage(_Extra):
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int | None = None  # thinking tokens, part of output; None where the API gives no split (pi 1.6)
    total_tokens: int = 0
    cost: Cost = field(factory=Cost)


StopReason = Literal["stop", "length", "toolUse", "error", "aborted"]


@record
class Failure:
    """Why a request failed, as the provider classified it (memory only, never written)."""

    kind: Literal["retryable", "overflow", "other"] = "other"
    status: int | None = None
    retry_after_ms: int | None = None


# ---------------------------------------------------------------- LLM messages


@record
class UserMessage(_Extra):
    role: Literal["user"] = field(default="user", init=False)
    content: str | list[UserContent]
    timestamp: int = field(factory=now_ms)


@record
class AssistantMessage(_Extra):
    role: Literal["assistant"] = field(default="assistant", init=False)
    content: list[Content] = field(factory=list)
    api: str = ""
    provider: str = ""
    model: str = ""
    usage: Usage = field(factory=Usage)
    stop_reason: StopReason = "stop"
    timestamp: int = field(factory=now_ms)
    response_id: str | None = None
    raw_stop_reason: str | None = None  # the provider's own stop/finish reason, as received (pi 1.6)
    error_message: str | None = None
    failure: Failure | None = field(default=None, kw_only=True, eq=False, metadata={"transient": True})

    @property
    def text(self) -> str:
        """All text blocks joined, what a print-mode user sees."""
        return "".join(c.text for c in self.content if isinstance(c, TextContent))

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [c for c in self.content if isinstance(c, ToolCall)]


@record
class ToolResultMessage(_Extra):
    role: Literal["toolResult"] = field(default="toolResult", init=False)
    tool_call_id: str
    tool_name: str
    content: list[UserContent] = field(factory=list)
    details: Any = None
    usage: Usage | None = None  # the tool's own model work (pi 1.6), not the turn's
    nested_calls: dict | None = None  # pi 1.6's bounded record of the calls it made (pi_core.tool_calls.NestedCalls)
    is_error: bool = False
    duration_ms: int | None = None  # how long the tool ran (pi 1.6)
    timestamp: int = field(factory=now_ms)


@record
class SystemMessage(_Extra):
    """pi 1.6's prompt and tools: the first declares them, later ones patch sections and tools."""

    role: Literal["system"] = field(default="system", init=False)
    content: str | list[UserContent] = ""
    sections: dict[str, str | None] | None = None
    timestamp: int = field(factory=now_ms)
    tools_added: list[dict] | None = None  # declarations: {name, description, parameters}
    tools_removed: list[dict] | None = None  # references: {name}


# ---------------------------------------------------------------- app messages


@record
class BashExecutionMessage(_Extra):
    """A shell command the user ran with ``!cmd`` (``!!cmd`` excludes it from context)."""

    role: Literal["bashExecution"] = field(default="bashExecution", init=False)
    command: str
    output: str = ""
    exit_code: int | None = None
    cancelled: bool = False
    truncated: bool = False
    full_output_path: str | None = None
    timestamp: int = field(factory=now_ms)
    exclude_from_context: bool | None = None


@record
class CustomMessage(_Extra):
    """A message a plugin put into the conversation; the model sees its content."""

    role: Literal["custom"] = field(default="custom", init=False)
    custom_type: str
    content: str | list[UserContent]
    display: bool = True
    details: Any = None
    timestamp: int = field(factory=now_ms)


@record
class BranchSummaryMessage(_Extra):
    role: Literal["branchSummary"] = field(default="branchSummary", init=False)
    summary: str
    from_id: str
    timestamp: int = field(factory=now_ms)


@record
class CompactionSummaryMessage(_Extra):
    role: Literal["compactionSummary"] = field(default="compactionSummary", init=False)
    summary: str
    tokens_before: int
    timestamp: int = field(factory=now_ms)


@record
class UnknownMessage:
    """A message of a role this version does not know, kept as read."""

    data: dict

    @property
    def role(self) -> str:
        return self.data.get("role", "")


Message = UserMessage | AssistantMessage | ToolResultMessage
AgentMessage = (SystemMessage | UserMessage | AssistantMessage | ToolResultMessage | BashExecutionMessage
                | CustomMessage | BranchSummaryMessage | CompactionSummaryMessage | UnknownMessage)
LLM_MESSAGE_TYPES = (UserMessage, AssistantMessage, ToolResultMessage)


def text_of(content: str | list) -> str:
    """The text of user or tool-result content, blocks joined by newlines."""
    if isinstance(content, str):
        return content
    return "\n".join(c.text for c in content if isinstance(c, TextContent))
