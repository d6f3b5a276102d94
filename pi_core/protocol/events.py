"""Agent events (pi's AgentEvent) and the event objects the loop's hooks receive.

Each agent event's ``type`` is also the name of the notify hook it reaches, so a plugin
that implements ``turn_end`` sees every :class:`TurnEnd`. ``message_end`` is the one
exception in kind: it is a chain hook that may replace the message before it is stored.
"""

from __future__ import annotations

from typing import Any, Literal

from attrs import define, field

from pi_core.protocol.messages import AgentMessage, ImageContent, ToolResultMessage, _filled
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

@define
class AgentStart:
    type: Literal["agent_start"] = field(default="agent_start", init=False)


@define
class AgentEnd:
    type: Literal["agent_end"] = field(default="agent_end", init=False)
    messages: list[AgentMessage] = field(factory=list)
    will_retry: bool = False  # pi 1.6: the app sends the failed request again (set by it)


@define
class TurnStart:
    type: Literal["turn_start"] = field(default="turn_start", init=False)
    #: Counts the run's turns from 0.
    turn_index: int = 0


@define
class TurnEnd:
    type: Literal["turn_end"] = field(default="turn_end", init=False)
    message: AgentMessage = _filled()
    tool_results: list[ToolResultMessage] = field(factory=list)
    turn_index: int = 0


@define
class MessageStart:
    type: Literal["message_start"] = field(default="message_start", init=False)
    message: AgentMessage = _filled()


@define
class MessageUpdate:
    type: Literal["message_update"] = field(default="message_update", init=False)
    message: AgentMessage = _filled()
    assistant_message_event: AssistantMessageEvent = _filled()


@define
class MessageEnd:
    type: Literal["message_end"] = field(default="message_end", init=False)
    message: AgentMessage = _filled()


@define
class ToolExecutionStart:
    type: Literal["tool_execution_start"] = field(default="tool_execution_start", init=False)
    tool_call_id: str = ""
    tool_name: str = ""
    args: Any = None
    parent_tool_call_id: str | None = None  # pi 1.6: set when another tool made the call


@define
class ToolExecutionUpdate:
    type: Literal["tool_execution_update"] = field(default="tool_execution_update", init=False)
    tool_call_id: str = ""
    tool_name: str = ""
    args: Any = None
    partial_result: Any = None
    parent_tool_call_id: str | None = None  # pi 1.6: set when another tool made the call


@define
class ToolExecutionEnd:
    type: Literal["tool_execution_end"] = field(default="tool_execution_end", init=False)
    tool_call_id: str = ""
    tool_name: str = ""
    result: Any = None
    is_error: bool = False
    duration_ms: int | None = None  # how long the tool ran; None when it never ran
    parent_tool_call_id: str | None = None  # pi 1.6: set when another tool made the call


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
    parent_tool_call_id: str | None = None  # pi 1.6: the calling tool's call, for nested calls


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


# ---------------------------------------------------------------- harness events


@define
class CompactionResult:
    """A summary and where the kept part of the branch starts."""

    summary: str
    first_kept_entry_id: str
    tokens_before: int
    estimated_tokens_after: int | None = field(default=None, kw_only=True)  # pi 1.6, after
    usage: Any = field(default=None, kw_only=True)  # pi 1.6: what the summary requests spent
    details: Any = None


@define
class CompactionStart:
    type: Literal["compaction_start"] = field(default="compaction_start", init=False)
    reason: CompactionReason = "manual"


@define
class CompactionEnd:
    type: Literal["compaction_end"] = field(default="compaction_end", init=False)
    reason: CompactionReason = "manual"
    result: CompactionResult | None = None
    aborted: bool = False
    will_retry: bool = False
    error_message: str | None = None


@define
class AutoRetryStart:
    type: Literal["auto_retry_start"] = field(default="auto_retry_start", init=False)
    attempt: int = 1
    max_attempts: int = 3
    delay_ms: int = 0
    error_message: str = ""


@define
class AutoRetryEnd:
    type: Literal["auto_retry_end"] = field(default="auto_retry_end", init=False)
    success: bool = False
    attempt: int = 0
    final_error: str | None = None


@define
class SessionStart:
    type: Literal["session_start"] = field(default="session_start", init=False)
    reason: StartReason = "startup"
    previous_session_file: str | None = None


@define
class SessionShutdown:
    """The session is being left: ``reason`` new, resume, fork, quit or reload."""

    type: Literal["session_shutdown"] = field(default="session_shutdown", init=False)
    reason: LeaveReason = "quit"


@define
class ModelSelect:
    type: Literal["model_select"] = field(default="model_select", init=False)
    model: Any = None
    previous_model: Any = None
    source: ModelSource = "set"


@define
class ThinkingLevelChanged:
    """In the event stream (pi's ``thinking_level_changed``): the level changed, by a
    set, a cycle, or a model change that clamped it."""

    type: Literal["thinking_level_changed"] = field(default="thinking_level_changed", init=False)
    level: str = "off"


@define
class ThinkingLevelSelect:
    type: Literal["thinking_level_select"] = field(default="thinking_level_select", init=False)
    level: str = "off"
    previous_level: str | None = None


# ---------------------------------------------------------------- session decisions


@define
class CompactionPreparation:
    """What a compaction will summarise and keep: exactly what the built-in summariser
    then uses, so a plugin's own summariser needs nothing from the built-in plugin.
    ``messages_to_summarize`` includes a split turn's prefix (``turn_prefix_messages``)."""

    first_kept_entry_id: str
    tokens_before: int
    messages_to_summarize: list = field(factory=list)
    turn_prefix_messages: list = field(factory=list)
    is_split_turn: bool = False
    previous_summary: str | None = None
    read_files: list[str] = field(factory=list)
    modified_files: list[str] = field(factory=list)


@define
class BeforeCompactEvent:
    """``session_before_compact``: ``entries`` is the branch (root → leaf) to compact;
    ``preparation`` the plan (``None`` when there is nothing to summarise)."""

    reason: CompactionReason
    entries: list
    will_retry: bool = False  # pi 1.6: the failed request is sent again after it
    instructions: str | None = None
    reserve_tokens: int = 16384
    keep_recent_tokens: int = 20000
    preparation: CompactionPreparation | None = None


@define
class AfterRunEvent:
    """``after_agent_run``: a run of the loop ended with ``messages`` (all the runs of this
    prompt so far), after ``continued`` earlier continuations; ``signal`` is aborted when
    the user aborts (a wait for a retry stops on it)."""

    messages: list
    continued: int = 0
    signal: Any = None


@define
class RunDecision:
    """An ``after_agent_run`` result: ``run_again`` sends the request again, from the
    context as it now is (a failed answer it ends in is left out, not deleted)."""

    run_again: bool = False


@define
class CompactionDecision:
    """A ``session_before_compact`` result: ``cancel``; or a ready ``result``; or
    ``generate``, an async function producing the result, called only if this decision
    wins (so a plugin later in load order can replace the built-in summariser for free)."""

    cancel: bool = False
    result: CompactionResult | None = None
    generate: Any = None
    from_hook: bool = True


@define
class BeforeTreeEvent:
    """``session_before_tree``: moving the leaf from ``old_leaf_id`` to ``target_id``;
    ``entries`` is the branch being left, down to the common ancestor."""

    target_id: str | None
    old_leaf_id: str | None
    entries: list
    summarize: bool = False
    instructions: str | None = None


@define
class TreeDecision:
    """A ``session_before_tree`` result: ``cancel``, or the branch summary (ready as
    ``summary``/``details`` or deferred as ``generate``)."""

    cancel: bool = False
    summary: str | None = None
    details: Any = None
    generate: Any = None
    from_hook: bool = True


@define
class SessionTreeEvent:
    type: Literal["session_tree"] = field(default="session_tree", init=False)
    old_leaf_id: str | None = None
    new_leaf_id: str | None = None
    summary_entry: Any = None


@define
class SessionCompactEvent:
    type: Literal["session_compact"] = field(default="session_compact", init=False)
    entry: Any = None
    from_hook: bool = False
    reason: CompactionReason = "manual"
    will_retry: bool = False


@define
class SwitchEvent:
    """``session_before_switch``: ``reason`` new or resume, ``target`` the file to resume."""

    reason: Literal["new", "resume"]
    target: str | None = None


@define
class ForkEvent:
    """``session_before_fork``: fork at ``entry_id``; ``position`` "before" (the new
    session ends just before that entry, pi's /fork) or "at" (it ends with it: a clone)."""

    entry_id: str | None
    position: ForkPosition = "before"


@define
class CancelDecision:
    """A ``session_before_switch`` / ``session_before_fork`` result."""

    cancel: bool = False


@define
class UserBashDecision:
    """A ``user_bash`` result: ``cancel``; or the output as a ready ``message``; or
    ``result`` fields (``output``, ``exit_code``, ``cancelled``, ``truncated``,
    ``full_output_path``) the harness makes the message from."""

    cancel: bool = False
    message: Any = None
    result: dict | None = None


@define
class UserBashEvent:
    """``user_bash``: the user's ``!cmd``; a handler may return ``cancel`` or the
    :class:`pi_core.protocol.messages.BashExecutionMessage` itself."""

    command: str
    exclude_from_context: bool = False
    cwd: str = "."
