"""pi-harness's public API: every name a plugin author or an SDK user needs, in one place.

::

    from pi_core import hookimpl, tool, ToolResult, Command, create_harness

Import from here (and from ``pi_core.testing`` and ``hookspecs``), never from the modules
below: they are free to move, this facade is not. Every name is imported on first use, so
loading a plugin does not pay for the loop and ``pi --help`` (which imports this package
for ``__version__``) does not pay for pluggy.

It names what sits above the core (the shell; the SDK's packages under ``pi_plugins``, as
pytest's namespace names its built-in plugins' classes) lazily, never at import time."""

__version__ = "0.1.0"

#: Where each public name lives: the one table to update when a module moves. ``__all__``
#: below and the stub ``__init__.pyi`` (what type checkers read) repeat it, and
#: tests/core/test_public_api.py keeps the three equal.
_LAZY: dict[str, str] = {name: module for module, names in {
    # Hooks, and what a hook or a tool receives
    "hookspecs.markers": "hookimpl",
    "pi_core.protocol.ctx": "Ctx UI ExecResult SessionControl",
    "pi_core.context": "Context NullUI",
    # Tools and the environment they run in
    "pi_core.protocol.tools": "Tool ToolResult ToolRun tool",
    "pi_core.protocol.environment": "DirEntry ExecutionEnvironment FileInfo OutputSink Process",
    # The command line and the user interface
    "pi_core.protocol.commands": "Command Flag MessageRenderer Shortcut",
    "pi_core.protocol.shell": "CliCommand Mode",
    # Models and providers
    "pi_core.protocol.model": "Model ModelCost calculate_cost",
    "pi_core.protocol.provider": "LlmContext Provider RequestContext StreamOptions THINKING_LEVELS "
                                 "ThinkingLevel ToolSpec",
    "pi_core.protocol.stream": "AssistantMessageEvent DoneEvent ErrorEvent StartEvent TextDeltaEvent "
                               "TextEndEvent TextStartEvent ThinkingDeltaEvent ThinkingEndEvent "
                               "ThinkingStartEvent ToolCallDeltaEvent ToolCallEndEvent ToolCallStartEvent",
    # Messages and their content
    "pi_core.protocol.messages": "AgentMessage AssistantMessage BashExecutionMessage BranchSummaryMessage "
                                 "CompactionSummaryMessage Content Cost CustomMessage Failure ImageContent "
                                 "Message StopReason SystemMessage TextContent ThinkingContent ToolCall ToolResultMessage "
                                 "Usage UserMessage text_of",
    "pi_core.protocol.usage": "final_assistant total_usage",
    "pi_core.protocol.codec": "from_json to_json",
    # Events, and the decisions and results hooks return
    "pi_core.protocol.events": "AfterRunEvent AgentEnd AgentEvent AgentStart AutoRetryEnd AutoRetryStart "
                               "BeforeAgentStartEvent BeforeCompactEvent BeforeTreeEvent CancelDecision "
                               "CompactionDecision CompactionEnd CompactionPreparation CompactionResult "
                               "CompactionStart ForkEvent InputEvent MessageEnd MessageStart MessageUpdate "
                               "ModelSelect ProviderResponseEvent QueueUpdate ResourcesDiscoverEvent "
                               "SessionCompactEvent SessionShutdown SessionStart SessionTreeEvent "
                               "SwitchEvent ThinkingLevelChanged ThinkingLevelSelect ToolCallDecision "
                               "ToolCallEvent ToolExecutionEnd ToolExecutionStart ToolExecutionUpdate "
                               "RunDecision TreeDecision TurnEnd TurnStart UserBashDecision UserBashEvent",
    "pi_core.protocol.options": "ResourceOptions",
    # Sessions: their entries, files and tree
    "pi_core.protocol.entries": "BranchSummaryEntry CompactionEntry ContextEditEntry CustomEntry "
                                "CustomMessageEntry Entry LabelEntry MessageEntry ModelChangeEntry "
                                "SessionHeader SessionInfoEntry ThinkingLevelChangeEntry UnknownEntry "
                                "UsageEntry message_of",
    "pi_core.session": "Session SessionError TreeNode session_dir_for sessions_root",
    # The core: the loop, the harness, the plugins, events, cancelling, pi's folders
    "pi_core.loop": "Agent AgentBusyError",
    "pi_core.plugins": "Plugins",
    "pi_core.bus": "EventBus",
    "pi_core.protocol.signal": "AbortSignal",
    "pi_core.paths": "agent_dir project_dir",
    # The application shell and the SDK: pi composed and run from Python
    "pi_plugins.sdk": "create_harness",
    "pi_core.app.harness": "Harness",
    "pi_core.app.settings": "Settings TrustQuestion project_allowed",
    "pi_core.app.discovery": "load_plugins",
    "pi_plugins.models.registry": "ModelRegistry",
    "pi_plugins.models.auth": "AuthStorage",
    "pi_plugins.models.virtual": "Dispatch KEEP_STATE Route RouteRequest VirtualModel",
    "pi_core.app.forks": "clone fork",
    "pi_plugins.session_listing.listing": "SessionInfo continue_recent list_all_sessions list_sessions",
}.items() for name in names.split()}

__all__ = ["__version__", *_LAZY]  # the stub (__init__.pyi) spells it out for type checkers


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pi_core' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
