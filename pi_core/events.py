"""Agent events (pi's AgentEvent) and the event objects the loop's hooks receive.

Each agent event's ``type`` is also the name of the notify hook it reaches, so a plugin
that implements ``turn_end`` sees every :class:`TurnEnd`. ``message_end`` is the one
exception in kind: it is a chain hook that may replace the message before it is stored.
"""

from __future__ import annotations

from typing import Any, Literal

from attrs import define, field

from pi_core.messages import AgentMessage, ImageContent, ToolResultMessage
from pi_core.stream import AssistantMessageEvent


@define
class AgentStart:
    type: Literal["agent_start"] = field(default="agent_start", init=False)


@define
class AgentEnd:
    type: Literal["agent_end"] = field(default="agent_end", init=False)
    messages: list[AgentMessage] = field(factory=list)


@define
class TurnStart:
    type: Literal["turn_start"] = field(default="turn_start", init=False)


@define
class TurnEnd:
    type: Literal["turn_end"] = field(default="turn_end", init=False)
    message: AgentMessage = None
    tool_results: list[ToolResultMessage] = field(factory=list)


@define
class MessageStart:
    type: Literal["message_start"] = field(default="message_start", init=False)
    message: AgentMessage = None


@define
class MessageUpdate:
    type: Literal["message_update"] = field(default="message_update", init=False)
    message: AgentMessage = None
    assistant_message_event: AssistantMessageEvent = None


@define
class MessageEnd:
    type: Literal["message_end"] = field(default="message_end", init=False)
    message: AgentMessage = None


@define
class ToolExecutionStart:
    type: Literal["tool_execution_start"] = field(default="tool_execution_start", init=False)
    tool_call_id: str = ""
    tool_name: str = ""
    args: Any = None


@define
class ToolExecutionUpdate:
    type: Literal["tool_execution_update"] = field(default="tool_execution_update", init=False)
    tool_call_id: str = ""
    tool_name: str = ""
    args: Any = None
    partial_result: Any = None


@define
class ToolExecutionEnd:
    type: Literal["tool_execution_end"] = field(default="tool_execution_end", init=False)
    tool_call_id: str = ""
    tool_name: str = ""
    result: Any = None
    is_error: bool = False


@define
class QueueUpdate:
    """The pending steering and follow-up texts, sent whenever either queue changes."""

    type: Literal["queue_update"] = field(default="queue_update", init=False)
    steering: list[str] = field(factory=list)
    follow_up: list[str] = field(factory=list)


AgentEvent = (
    AgentStart
    | AgentEnd
    | TurnStart
    | TurnEnd
    | MessageStart
    | MessageUpdate
    | MessageEnd
    | ToolExecutionStart
    | ToolExecutionUpdate
    | ToolExecutionEnd
    | QueueUpdate
)


# ---------------------------------------------------------------- hook events


@define
class InputEvent:
    """What the user submitted; ``source`` is interactive, rpc or extension."""

    text: str
    images: list[ImageContent] = field(factory=list)
    source: str = "interactive"
    handled: bool = False


@define
class BeforeAgentStartEvent:
    prompt: str
    images: list[ImageContent] = field(factory=list)
    system_prompt: str = ""
    messages: list[AgentMessage] = field(factory=list)


@define
class ToolCallEvent:
    """A tool call about to run (``before_tool_call``) or just run (``after_tool_call``).

    ``arguments`` are the validated arguments as a dict; a ``before_tool_call`` handler
    may change them in place or return a :class:`ToolCallDecision` with new ones.
    """

    tool_call_id: str
    tool_name: str
    arguments: dict
    assistant_message: Any = None


@define
class ToolCallDecision:
    """A ``before_tool_call`` result: block the call with a reason, or replace its arguments."""

    block: bool = False
    reason: str | None = None
    arguments: dict | None = None


@define
class ProviderResponseEvent:
    status: int
    headers: dict[str, str] = field(factory=dict)


@define
class ResourcesDiscoverEvent:
    """Asks plugins for extra skill and prompt-template paths (``resources_discover``);
    ``reason`` is ``startup`` the first time a run loads its resources, ``reload`` after."""

    cwd: str
    reason: Literal["startup", "reload"] = "startup"
