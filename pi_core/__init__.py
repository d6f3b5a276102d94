"""pi-harness core: the message protocol, the agent loop, the plugin manager.

Plugin authors need little more than::

    from pi_core import hookimpl, tool, ToolResult

Every name is imported on first use, so loading a plugin does not pay for the loop and
``pi --help`` (which imports this package for ``__version__``) does not pay for pluggy.
"""

__version__ = "0.1.0"

_LAZY = {
    "hookimpl": "hookspecs.markers",
    "Ctx": "pi_core.protocol.ctx",
    "Agent": "pi_core.loop",
    "AgentBusyError": "pi_core.loop",
    "Plugins": "pi_core.plugins",
    "Tool": "pi_core.protocol.tools",
    "ToolResult": "pi_core.protocol.tools",
    "ToolRun": "pi_core.protocol.tools",
    "tool": "pi_core.protocol.tools",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pi_core' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
