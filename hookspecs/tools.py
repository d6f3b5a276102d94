"""Hooks around tools: registration, permission, execution and results."""

from hookspecs.markers import hookspec


@hookspec
def register_tools(ctx):
    """Kind: collect (by tool name).

    At start-up and reload. Return a list of :class:`pi_core.tools.Tool`. A tool from a
    later plugin replaces an earlier one of the same name.
    """


@hookspec
def before_tool_call(event, ctx):
    """Kind: decide (stops on ``block``).

    Before a tool runs, after its arguments were validated. ``event`` is a
    :class:`pi_core.events.ToolCallEvent` (``tool_call_id``, ``tool_name``, ``arguments``).
    Return :class:`pi_core.events.ToolCallDecision` with ``block=True`` and a ``reason``
    to refuse the call (the model reads the reason), or with ``arguments`` to replace
    them; ``None`` lets the call through.
    """


@hookspec
def tool_execution_start(event, ctx):
    """Kind: notify. A tool call starts (``tool_call_id``, ``tool_name``, ``args``)."""


@hookspec
def tool_execution_update(event, ctx):
    """Kind: notify. A running tool reported progress (``partial_result``)."""


@hookspec
def tool_execution_end(event, ctx):
    """Kind: notify. A tool call finished (``result``, ``is_error``). In a parallel
    batch these come in completion order; the tool-result messages keep call order."""


@hookspec
def after_tool_call(result, event, ctx):
    """Kind: chain.

    After a tool ran, before its result becomes a message. ``result`` is a
    :class:`pi_core.tools.ToolResult`; ``event`` the :class:`pi_core.events.ToolCallEvent`.
    Return a changed result to patch ``content``, ``details`` or ``is_error``.
    """


@hookspec
def user_bash(event, ctx):
    """Kind: decide.

    The user ran ``!cmd`` (``event.exclude_from_context`` is true for ``!!cmd``). Return a
    result to supply the output yourself or ``cancel`` to stop it; ``None`` runs it.
    """


@hookspec
def execution_environment(ctx):
    """Kind: decide (the last plugin's environment wins).

    Each time a built-in tool (read, write, edit, bash, grep, find, ls) starts running,
    before it touches a file or starts a process. Return a
    :class:`pi_plugins.tools.environment.ExecutionEnvironment` to have the tools read,
    write, list and run commands through it (a container, a remote host, a sandbox that
    vets or records every call); ``None`` keeps the default, the local machine in
    ``ctx.cwd``.
    """
