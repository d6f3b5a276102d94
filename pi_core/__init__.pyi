"""What type checkers see of :mod:`pi_core`: its names are imported lazily at run time
(``__getattr__`` in ``__init__.py``, from the one table there); this stub names where each
comes from. tests/core/test_public_api.py keeps it equal to the table."""

# isort: off
__version__: str

from hookspecs.markers import hookimpl as hookimpl
from pi_core.protocol.ctx import (
    Ctx as Ctx, UI as UI, ExecResult as ExecResult, SessionControl as SessionControl,
)
from pi_core.context import Context as Context, NullUI as NullUI
from pi_core.protocol.tools import Tool as Tool, ToolResult as ToolResult, ToolRun as ToolRun, tool as tool
from pi_core.protocol.environment import (
    DirEntry as DirEntry, ExecutionEnvironment as ExecutionEnvironment, FileInfo as FileInfo,
    OutputSink as OutputSink, Process as Process,
)
from pi_core.protocol.commands import (
    Command as Command, Flag as Flag, MessageRenderer as MessageRenderer, Shortcut as Shortcut,
)
from pi_core.protocol.shell import CliCommand as CliCommand, Mode as Mode
from pi_core.protocol.model import Model as Model, ModelCost as ModelCost, calculate_cost as calculate_cost
from pi_core.protocol.provider import (
    LlmContext as LlmContext, Provider as Provider, RequestContext as RequestContext,
    StreamOptions as StreamOptions, THINKING_LEVELS as THINKING_LEVELS, ThinkingLevel as ThinkingLevel,
    ToolSpec as ToolSpec,
)
from pi_core.protocol.stream import (
    AssistantMessageEvent as AssistantMessageEvent, DoneEvent as DoneEvent, ErrorEvent as ErrorEvent,
    StartEvent as StartEvent, TextDeltaEvent as TextDeltaEvent, TextEndEvent as TextEndEvent,
    TextStartEvent as TextStartEvent, ThinkingDeltaEvent as ThinkingDeltaEvent,
    ThinkingEndEvent as ThinkingEndEvent, ThinkingStartEvent as ThinkingStartEvent,
    ToolCallDeltaEvent as ToolCallDeltaEvent, ToolCallEndEvent as ToolCallEndEvent,
    ToolCallStartEvent as ToolCallStartEvent,
)
from pi_core.protocol.messages import (
    AgentMessage as AgentMessage, AssistantMessage as AssistantMessage,
    BashExecutionMessage as BashExecutionMessage, BranchSummaryMessage as BranchSummaryMessage,
    CompactionSummaryMessage as CompactionSummaryMessage, Content as Content, Cost as Cost,
    CustomMessage as CustomMessage, Failure as Failure, ImageContent as ImageContent, Message as Message,
    StopReason as StopReason, SystemMessage as SystemMessage, TextContent as TextContent,
    ThinkingContent as ThinkingContent, ToolCall as ToolCall, ToolResultMessage as ToolResultMessage, Usage as Usage,
    UserMessage as UserMessage, text_of as text_of,
)
from pi_core.protocol.usage import final_assistant as final_assistant, total_usage as total_usage
from pi_core.protocol.codec import from_json as from_json, to_json as to_json
from pi_core.protocol.events import (
    AfterRunEvent as AfterRunEvent, AgentEnd as AgentEnd, AgentEvent as AgentEvent,
    AgentStart as AgentStart, AutoRetryEnd as AutoRetryEnd, AutoRetryStart as AutoRetryStart,
    BeforeAgentStartEvent as BeforeAgentStartEvent, BeforeCompactEvent as BeforeCompactEvent,
    BeforeTreeEvent as BeforeTreeEvent, CancelDecision as CancelDecision,
    CompactionDecision as CompactionDecision, CompactionEnd as CompactionEnd,
    CompactionPreparation as CompactionPreparation, CompactionResult as CompactionResult,
    CompactionStart as CompactionStart, ForkEvent as ForkEvent, InputEvent as InputEvent,
    MessageEnd as MessageEnd, MessageStart as MessageStart, MessageUpdate as MessageUpdate,
    ModelSelect as ModelSelect, ProviderResponseEvent as ProviderResponseEvent, QueueUpdate as QueueUpdate,
    ResourcesDiscoverEvent as ResourcesDiscoverEvent, SessionCompactEvent as SessionCompactEvent,
    SessionShutdown as SessionShutdown, SessionStart as SessionStart, SessionTreeEvent as SessionTreeEvent,
    SwitchEvent as SwitchEvent, ThinkingLevelChanged as ThinkingLevelChanged,
    ThinkingLevelSelect as ThinkingLevelSelect, ToolCallDecision as ToolCallDecision,
    ToolCallEvent as ToolCallEvent, ToolExecutionEnd as ToolExecutionEnd,
    ToolExecutionStart as ToolExecutionStart, ToolExecutionUpdate as ToolExecutionUpdate,
    RunDecision as RunDecision, TreeDecision as TreeDecision, TurnEnd as TurnEnd, TurnStart as TurnStart,
    UserBashDecision as UserBashDecision, UserBashEvent as UserBashEvent,
)
from pi_core.protocol.options import ResourceOptions as ResourceOptions
from pi_core.protocol.entries import (
    BranchSummaryEntry as BranchSummaryEntry, CompactionEntry as CompactionEntry,
    ContextEditEntry as ContextEditEntry, CustomEntry as CustomEntry,
    CustomMessageEntry as CustomMessageEntry, Entry as Entry, LabelEntry as LabelEntry,
    MessageEntry as MessageEntry, ModelChangeEntry as ModelChangeEntry, SessionHeader as SessionHeader,
    SessionInfoEntry as SessionInfoEntry, ThinkingLevelChangeEntry as ThinkingLevelChangeEntry,
    UnknownEntry as UnknownEntry, UsageEntry as UsageEntry, message_of as message_of,
)
from pi_core.session import (
    Session as Session, SessionError as SessionError, TreeNode as TreeNode,
    session_dir_for as session_dir_for, sessions_root as sessions_root,
)
from pi_core.loop import Agent as Agent, AgentBusyError as AgentBusyError
from pi_core.plugins import Plugins as Plugins
from pi_core.bus import EventBus as EventBus
from pi_core.protocol.signal import AbortSignal as AbortSignal
from pi_core.paths import agent_dir as agent_dir, project_dir as project_dir
from pi_plugins.sdk import create_harness as create_harness
from pi_core.app.harness import Harness as Harness
from pi_core.app.settings import (
    Settings as Settings, TrustQuestion as TrustQuestion, project_allowed as project_allowed,
)
from pi_core.app.discovery import load_plugins as load_plugins
from pi_plugins.models.registry import ModelRegistry as ModelRegistry
from pi_plugins.models.auth import AuthStorage as AuthStorage
from pi_plugins.models.virtual import (
    KEEP_STATE as KEEP_STATE, Dispatch as Dispatch, Route as Route, RouteRequest as RouteRequest,
    VirtualModel as VirtualModel,
)
from pi_core.app.forks import clone as clone, fork as fork
from pi_plugins.session_listing.listing import (
    SessionInfo as SessionInfo, continue_recent as continue_recent, list_all_sessions as list_all_sessions,
    list_sessions as list_sessions,
)
# isort: on

__all__ = [
    "__version__", "hookimpl", "Ctx", "UI", "ExecResult", "SessionControl", "Context", "NullUI",
    "Tool", "ToolResult", "ToolRun", "tool", "DirEntry", "ExecutionEnvironment", "FileInfo",
    "OutputSink", "Process", "Command", "Flag", "MessageRenderer", "Shortcut", "CliCommand", "Mode",
    "Model", "ModelCost", "calculate_cost", "LlmContext", "Provider", "RequestContext",
    "StreamOptions", "THINKING_LEVELS", "ThinkingLevel", "ToolSpec", "AssistantMessageEvent",
    "DoneEvent", "ErrorEvent", "StartEvent", "TextDeltaEvent", "TextEndEvent", "TextStartEvent",
    "ThinkingDeltaEvent", "ThinkingEndEvent", "ThinkingStartEvent", "ToolCallDeltaEvent",
    "ToolCallEndEvent", "ToolCallStartEvent", "AgentMessage", "AssistantMessage",
    "BashExecutionMessage", "BranchSummaryMessage", "CompactionSummaryMessage", "Content", "Cost",
    "CustomMessage", "Failure", "ImageContent", "Message", "StopReason", "SystemMessage", "TextContent",
    "ThinkingContent", "ToolCall", "ToolResultMessage", "Usage", "UserMessage", "text_of",
    "final_assistant", "total_usage", "from_json", "to_json", "AfterRunEvent", "AgentEnd",
    "AgentEvent", "AgentStart", "AutoRetryEnd", "AutoRetryStart", "BeforeAgentStartEvent",
    "BeforeCompactEvent", "BeforeTreeEvent", "CancelDecision", "CompactionDecision",
    "CompactionEnd", "CompactionPreparation", "CompactionResult", "CompactionStart", "ForkEvent",
    "InputEvent", "MessageEnd", "MessageStart", "MessageUpdate", "ModelSelect",
    "ProviderResponseEvent", "QueueUpdate", "ResourcesDiscoverEvent", "SessionCompactEvent",
    "SessionShutdown", "SessionStart", "SessionTreeEvent", "SwitchEvent", "ThinkingLevelChanged",
    "ThinkingLevelSelect", "ToolCallDecision", "ToolCallEvent", "ToolExecutionEnd",
    "ToolExecutionStart", "ToolExecutionUpdate", "RunDecision", "TreeDecision", "TurnEnd",
    "TurnStart", "UserBashDecision", "UserBashEvent", "ResourceOptions", "BranchSummaryEntry",
    "CompactionEntry", "ContextEditEntry", "CustomEntry", "CustomMessageEntry", "Entry",
    "LabelEntry", "MessageEntry", "ModelChangeEntry", "SessionHeader", "SessionInfoEntry",
    "ThinkingLevelChangeEntry", "UnknownEntry", "UsageEntry", "message_of", "Session",
    "SessionError", "TreeNode", "session_dir_for", "sessions_root", "Agent", "AgentBusyError",
    "Plugins", "EventBus", "AbortSignal", "agent_dir", "project_dir", "create_harness", "Harness",
    "Settings", "TrustQuestion", "project_allowed", "load_plugins", "ModelRegistry", "AuthStorage",
    "Dispatch", "KEEP_STATE", "Route", "RouteRequest", "VirtualModel",
    "clone", "fork", "SessionInfo", "continue_recent", "list_all_sessions", "list_sessions",
]
