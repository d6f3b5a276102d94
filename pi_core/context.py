"""``ctx``: what every hook receives, the plugin's handle on the running harness.

The core's context covers the agent loop (cwd, agent dir, settings, this run's resource
options, ui, event bus, model, tools, abort, idle state, steering and follow-ups);
:class:`HarnessContext` adds the session and the harness's operations; the app's
(:class:`pi_core.app.agent_session_context.AgentSessionContext`) adds sending messages
with every ``deliver_as``, compaction, summaries, tree navigation, session control and
processes.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pi_core.bus import EventBus

if TYPE_CHECKING:
    from pi_core.harness import Harness
    from pi_core.loop import Agent
    from pi_core.plugins import Plugins
    from pi_core.protocol.options import ResourceOptions
    from pi_core.protocol.shell import Settings

log = logging.getLogger("pi.ui")


class NullUI:
    """The UI where there is none (print mode, tests): notifications go to the log,
    dialogs answer with their defaults (confirm: no; select and input: nothing)."""

    has_ui = False

    def notify(self, message: str, level: str = "info") -> None:
        log.log(logging.WARNING if level in ("warning", "error") else logging.INFO, "%s", message)

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None) -> bool:
        return False

    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None:
        return None

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None) -> str | None:
        return None

    async def editor(self, title: str, prefill: str = "", *, timeout: float | None = None) -> str | None:
        return None

    # Status lines, widgets, the title and the editor exist only where there is a UI.
    def set_status(self, key: str, text: str | None = None) -> None: ...

    def set_widget(self, key: str, lines: list[str] | None = None, placement: str | None = None) -> None: ...

    def set_title(self, title: str) -> None: ...

    def set_editor_text(self, text: str) -> None: ...

    def get_editor_text(self) -> str:
        return ""


class PluginContext:
    def __init__(
        self,
        *,
        cwd: str,
        plugins: Plugins,
        agent: Agent | None = None,
        ui: Any = None,
        events: EventBus | None = None,
        settings: Settings | None = None,
        options: ResourceOptions | None = None,
        agent_dir: Path | None = None,
    ) -> None:
        from pi_core.paths import agent_dir as default_agent_dir
        from pi_core.protocol.options import ResourceOptions
        from pi_core.protocol.shell import NoSettings

        self.cwd = cwd
        self.plugins = plugins
        self.agent = agent
        self.ui = ui or NullUI()
        self.events = events or EventBus()
        self.agent_dir = Path(agent_dir) if agent_dir is not None else default_agent_dir()
        self.settings = settings if settings is not None else NoSettings()
        self.options = options or ResourceOptions()
        #: Values of the plugins' command-line flags (``register_flags``), by name.
        self.flags: dict[str, Any] = {}

    def get_flag(self, name: str, default: Any = None) -> Any:
        """The value of a plugin's flag (``--name``), its default when not given, or
        ``default`` for a flag nobody registered (pi's ``getFlag``)."""
        return self.flags.get(name.lstrip("-"), default)

    @property
    def model(self):
        return self.agent.model if self.agent else None

    def is_idle(self) -> bool:
        return self.agent is None or not self.agent.is_running

    def abort(self) -> None:
        if self.agent is not None:
            self.agent.abort()

    def send_user_message(
        self, content: Any, deliver_as: Literal["steer", "follow_up"] = "steer",
        trigger_turn: bool = False,
    ) -> None:
        """Queue a user message: ``steer`` reaches the model before its next request,
        ``follow_up`` after the run would otherwise end. (A bare :class:`Agent` has no
        harness to start runs or hold ``next_turn`` messages: see ``HarnessContext``.)"""
        if deliver_as not in ("steer", "follow_up"):
            raise ValueError(f"a bare agent's ctx takes steer or follow_up, not {deliver_as!r}")
        if deliver_as == "steer":
            self.agent.steer(content)
        else:
            self.agent.follow_up(content)

    send_message = send_user_message

    def get_active_tools(self) -> list[str]:
        return [t.name for t in self.agent.active_tools()] if self.agent else []

    def set_active_tools(self, names: list[str]) -> None:
        self.agent.set_active_tools(names)


class HarnessContext(PluginContext):
    """``ctx`` once a harness runs: the core's context plus the session and the
    harness's operations (entries, names, labels, tools at run time). Sending messages with every ``deliver_as`` is the app's."""

    harness: Harness

    @property
    def session(self):
        return self.harness.session

    @property
    def session_id(self) -> str | None:
        return self.harness.session.id if self.harness.session is not None else None

    def append_entry(self, custom_type: str, data: Any = None):
        """Keep plugin state in the session (a ``custom`` entry, never sent to the model)."""
        return self.harness.session.append_custom(custom_type, data)

    # ------------------------------------------------ tools at run time

    def register_tool(self, tool) -> None:
        """Add (or replace, by name) a tool now; the model is offered it from its next
        request on, without a reload (pi's ``registerTool`` after start-up)."""
        self.harness.register_tool(tool)

    def unregister_tool(self, name: str) -> bool:
        """Take a tool away now; False when there was none of that name."""
        return self.harness.unregister_tool(name)

    def set_session_name(self, name: str) -> None:
        self.harness.session.append_session_info(name)

    def set_label(self, entry_id: str, label: str | None) -> None:
        self.harness.session.append_label(entry_id, label)
