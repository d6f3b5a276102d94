"""Agent events (pi's AgentEvent) and the event and decision objects hooks receive and
return (each hook's spec in ``hookspecs`` says what they mean). An agent event's ``type``
names the notify hook it reaches; ``message_end`` alone is a chain that may replace it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pi_core.protocol.messages import AgentMessage, ImageContent, ToolResultMessage, _filled
from pi_core.protocol.records import field, record
from pi_core.protocol.stream import AssistantMessageEvent

#: Why a compaction runs: the user asked, the context passed its threshold, or the
#: model refused a request as too long.
CompactionReason = Literal["manual", "threshold", "overflow"]
#: How the model was chosen: set by name, cycled to, or restored from the session.
ModelSource = Literal["set", "cycle", "restore"]
#: Where a fork ends: just before the entry (pi's /fork) or with it (a clone).
ForkPosition = Literal["before", "at"]
StartReason = Literal["startup", "new", "resume", "fork", "reload"]
LeaveReason = Literal["new", "resume", "fork", "quit", "reload"]

@record
class AgentStart:
    type: Literal["agent_start"] = field(default="agent_start", init=False)


@record
class AgentEnd:
    type: Literal["agent_end"] = field(default="agent_end", init=False)
    messages: list[AgentMessage] = field(factory=list)
    will_retry: bool = False  # pi 1.6: the app sends the failed request again (set by it)


@record
class TurnStart:
    type: Literal["turn_start"] = field(default="turn_start", init=False)
    #: Counts the run's turns from 0.
    turn_index: int = 0


@record
class TurnEnd:
    type: Literal["turn_end"] = field(default="turn_end", init=False)
    message: AgentMessage = _filled()
    tool_results: list[ToolResultMessage] = field(factory=list)
    turn_index: int = 0


@record
class MessageStart:
    type: Literal["message_start"] = field(default="message_start", init=False)
    message: AgentMessage = _filled()


@record
class MessageUpdate:
    type: Literal["message_update"] = field(default="message_update", init=False)
    message: AgentMessage = _filled()
    assistant_message_event: AssistantMessageEvent = _filled()


@record
class MessageEnd:
    type: Literal["message_end"] = field(default="message_end", init=False)
    message: AgentMessage = _filled()


@record
class ToolExecutionStart:
    type: Literal["tool_execution_start"] = field(default="tool_execution_start", init=False)
    tool_call_id: str = ""
    tool_name: str = ""
    args: Any = None
    parent_tool_call_id: str | None = None  # pi 1.6: set when another tool made the call


@record
class ToolExecutionUpdate:
    type: Literal["tool_execution_update"] = field(default="tool_execution_update", init=False)
    tool_call_id: str = ""
    tool_name: str = ""
    args: Any = None
    partial_result: Any = None
    parent_tool_call_id: str | None = None  # pi 1.6: set when another tool made the call


@record
class ToolExecutionEnd:
    type: Literal["tool_execution_end"] = field(default="tool_execution_end", init=False)
    tool_call_id: str = ""
    tool_name: str = ""
    result: Any = None
    is_error: bool = False
    duration_ms: int | None = None  # how long the tool ran; None when it never ran
    parent_tool_call_id: str | None = None  # pi 1.6: set when another tool made the call


@record
class QueueUpdate:
    type: Literal["queue_update"] = field(default="queue_update", init=False)
    steering: list[str] = field(factory=list)
    follow_up: list[str] = field(factory=list)


AgentEvent = (AgentStart | AgentEnd | TurnStart | TurnEnd | MessageStart | MessageUpdate | MessageEnd
              | ToolExecutionStart | ToolExecutionUpdate | ToolExecutionEnd | QueueUpdate)


# ---------------------------------------------------------------- hook events


@record
class InputEvent:
    text: str
    images: list[ImageContent] = field(factory=list)
    source: str = "interactive"
    handled: bool = False
    streaming_behavior: str | None = None  # pi 1.6: "steer" / "follow_up" while a run is under way


@record
class BeforeAgentStartEvent:
    prompt: str
    images: list[ImageContent] = field(factory=list)
    system_prompt: str = ""
    messages: list[AgentMessage] = field(factory=list)
    before_prompt: list[AgentMessage] = field(factory=list)  # before it (pi 1.6's section updates)
    message: AgentMessage | None = None  # a plugin's message that starts the run (prompt "")


@record
class ToolCallEvent:
    """A tool call about to run or just run; ``arguments`` validated, as a dict."""

    tool_call_id: str
    tool_name: str
    arguments: dict
    assistant_message: Any = None
    parent_tool_call_id: str | None = None  # pi 1.6: the calling tool's call, for nested calls


@record
class ToolCallDecision:
    block: bool = False
    reason: str | None = None
    arguments: dict | None = None


@record
class SessionStart:
    type: Literal["session_start"] = field(default="session_start", init=False)
    reason: StartReason = "startup"
    previous_session_file: str | None = None


@record
class SessionShutdown:
    type: Literal["session_shutdown"] = field(default="session_shutdown", init=False)
    reason: LeaveReason = "quit"


@record
class AfterRunEvent:
    """``messages``: all the runs of this prompt so far; ``signal``: a retry's wait stops on it."""

    messages: list
    continued: int = 0
    signal: Any = None


if TYPE_CHECKING:  # the types of what __getattr__ below gives
    from pi_core.protocol.rare_events import *  # noqa: F403


def __getattr__(name: str) -> Any:
    """The rarely used events and decisions, from :mod:`rare_events` on first use."""
    if not name.startswith("_"):  # not the import system's questions (``__path__`` …)
        from pi_core.protocol import rare_events

        if hasattr(rare_events, name):
            value = globals()[name] = getattr(rare_events, name)
            return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
