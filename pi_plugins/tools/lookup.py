"""The execution environment of one tool run, for the tool modules: they load at every
start (the tools are registered then), the environment module only when a tool runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pi_core.protocol.environment import ExecutionEnvironment
    from pi_core.protocol.tools import ToolRun


async def environment_for(run: ToolRun | None) -> ExecutionEnvironment:
    """:func:`pi_plugins.tools.environment.environment_for`."""
    from pi_plugins.tools.environment import environment_for as find

    # The plugins' base class leaves the protocol's file methods (stat, read_bytes …) to
    # its subclasses, so mypy does not see it as the protocol; every environment found is one.
    return await find(run)  # type: ignore[return-value]
