"""Subagents: the ``subagent`` tool (off by default; ``--tools ...,subagent`` or the setting
``subagents.enabled``). Children run in this process as asyncio tasks, each with its own
context and session file linked to the parent's; see :mod:`pi_plugins.subagents.tool`.

Settings: ``subagents.enabled`` (false), ``subagents.maxConcurrency`` (4),
``subagents.maxDepth`` (1: children cannot spawn children).
"""

from __future__ import annotations

from pi_core import hookimpl

#: The tool's name (here, so registering it does not load the children's machinery).
TOOL_NAME = "subagent"


@hookimpl
def register_tools(ctx):
    from pi_plugins.subagents.tool import subagent_tool

    return [subagent_tool(ctx.cwd, ctx.agent_dir, bool(ctx.settings.get("subagents.enabled", False)))]
