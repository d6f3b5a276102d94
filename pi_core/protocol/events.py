"""Agent events (pi's AgentEvent) and the event and decision objects hooks receive and
return (each hook's spec in ``hookspecs`` says what they mean). An agent event's ``type``
names the notify hook it reaches; ``message_end`` alone is a chain that may replace it.
"""

from __future__ import annotations

from typing import Any, Literal

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


@record
class InputEvent:
    text: str
    images: list[ImageContent] = field(factory=list)
    source: str = "interactive"
    handled: bool = False


@record
class BeforeAgentStartEvent:
    prompt: str
    images: list[ImageContent] = field(factory=list)
    system_prompt: str = ""
    messages: list[AgentMessage] = field(factory=list)
    #: Messages that go before the prompt (pi 1.6's system-prompt section updates).
    before_prompt: list[AgentMessage] = field(factory=list)


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
class ProviderResponseEvent:
    status: int
    headers: dict[str, str] = field(factory=dict)


@record
class ResourcesDiscoverEvent:
    cwd: str
    reason: Literal["startup", "reload"] = "startup"


# ---------------------------------------------------------------- harness events


@record
class CompactionResult:
    """A summary and where the kept part of the branch starts."""

    summary: str
    first_kept_entry_id: str
    tokens_before: int
    estimated_tokens_after: int | None = field(default=None, kw_only=True)  # pi 1.6, after
    usage: Any = field(default=None, kw_only=True)  # pi 1.6: what the summary requests spent
    details: Any = None


@record
class CompactionStart:
    type: Literal["compaction_start"] = field(default="compaction_start", init=False)
    reason: CompactionReason = "manual"


@record
class CompactionEnd:
    type: Literal["compaction_end"] = field(default="compaction_end", init=False)
    reason: CompactionReason = "manual"
    result: CompactionResult | None = None
    aborted: bool = False
    will_retry: bool = False
    error_message: str | None = None


@record
class AutoRetryStart:
    type: Literal["auto_retry_start"] = field(default="auto_retry_start", init=False)
    attempt: int = 1
    max_attempts: int = 3
    delay_ms: int = 0
    error_message: str = ""


@record
class AutoRetryEnd:
    type: Literal["auto_retry_end"] = field(default="auto_retry_end", init=False)
    success: bool = False
    attempt: int = 0
    final_error: str | None = None


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
class ModelSelect:
    type: Literal["model_select"] = field(default="model_select", init=False)
    model: Any = None
    previous_model: Any = None
    source: ModelSource = "set"


@record
class ThinkingLevelChanged:
    """pi's ``thinking_level_changed``: by a set, a cycle, or a model change clamping it."""

    type: Literal["thinking_level_changed"] = field(default="thinking_level_changed", init=False)
    level: str = "off"


@record
class ThinkingLevelSelect:
    type: Literal["thinking_level_select"] = field(default="thinking_level_select", init=False)
    level: str = "off"
    previous_level: str | None = None


# ---------------------------------------------------------------- session decisions


@record
class CompactionPreparation:
    """Exactly what the built-in summariser uses, so a plugin's own needs nothing from
    it; ``messages_to_summarize`` includes a split turn's prefix."""

    first_kept_entry_id: str
    tokens_before: int
    messages_to_summarize: list = field(factory=list)
    turn_prefix_messages: list = field(factory=list)
    is_split_turn: bool = False
    previous_summary: str | None = None
    read_files: list[str] = field(factory=list)
    modified_files: list[str] = field(factory=list)


@record
class BeforeCompactEvent:
    """``entries``: the branch (root → leaf) to compact."""

    reason: CompactionReason
    entries: list
    will_retry: bool = False  # pi 1.6: the failed request is sent again after it
    instructions: str | None = None
    reserve_tokens: int = 16384
    keep_recent_tokens: int = 20000
    preparation: CompactionPreparation | None = None


@record
class AfterRunEvent:
    """``messages``: all the runs of this prompt so far; ``signal``: a retry's wait stops on it."""

    messages: list
    continued: int = 0
    signal: Any = None


@record
class RunDecision:
    """``run_again``: from the context as it now is (a failed answer it ends in left out)."""

    run_again: bool = False


@record
class CompactionDecision:
    """``generate`` (async) runs only if this decision wins, so a plugin later in load
    order replaces the built-in summariser for free."""

    cancel: bool = False
    result: CompactionResult | None = None
    generate: Any = None
    from_hook: bool = True


@record
class BeforeTreeEvent:
    """``entries``: the branch being left, down to the common ancestor."""

    target_id: str | None
    old_leaf_id: str | None
    entries: list
    summarize: bool = False
    instructions: str | None = None


@record
class TreeDecision:
    cancel: bool = False
    summary: str | None = None
    details: Any = None
    generate: Any = None
    from_hook: bool = True


@record
class SessionTreeEvent:
    type: Literal["session_tree"] = field(default="session_tree", init=False)
    old_leaf_id: str | None = None
    new_leaf_id: str | None = None
    summary_entry: Any = None


@record
class SessionCompactEvent:
    type: Literal["session_compact"] = field(default="session_compact", init=False)
    entry: Any = None
    from_hook: bool = False
    reason: CompactionReason = "manual"
    will_retry: bool = False


@record
class SwitchEvent:
    reason: Literal["new", "resume"]
    target: str | None = None


@record
class ForkEvent:
    """``position``: "before" the entry (pi's /fork) or "at" it (a clone)."""

    entry_id: str | None
    position: ForkPosition = "before"


@record
class CancelDecision:
    cancel: bool = False


@record
class UserBashDecision:
    """``result``: the fields (``output``, ``exit_code``, ``cancelled``, ``truncated``,
    ``full_output_path``) the harness makes the message from."""

    cancel: bool = False
    message: Any = None
    result: dict | None = None


@record
class UserBashEvent:
    command: str
    exclude_from_context: bool = False
    cwd: str = "."
