"""pi-harness core: the message protocol, the agent loop, the plugin manager.

Plugin authors need little more than::

    from pi_core import hookimpl, tool, ToolResult
"""

from hookspecs.markers import hookimpl
from pi_core.loop import Agent, AgentBusyError
from pi_core.plugins import Plugins
from pi_core.tools import Tool, ToolResult, ToolRun, tool

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AgentBusyError",
    "Plugins",
    "Tool",
    "ToolResult",
    "ToolRun",
    "__version__",
    "hookimpl",
    "tool",
]
