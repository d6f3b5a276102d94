"""``ctx``: what every hook receives, the plugin's handle on the running agent.

One concrete class with every member of :class:`pi_core.protocol.ctx.Ctx` (pi's
``ExtensionContext`` / ``ExtensionAPI``; docs/plugins.md, "ctx", says what each does). A
bare :class:`pi_core.loop.Agent` serves the loop's part; the session, sending, compaction,
session control and processes go to the harness, and a member that needs one says so."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from pi_core.bus import EventBus
from pi_core.protocol.ctx import ExecResult, SessionControl
from pi_core.protocol.messages import CustomMessage

if TYPE_CHECKING:
    from pi_core.loop import Agent
    from pi_core.plugins import Plugins
    from pi_core.protocol.events import CompactionReason, ForkPosition
    from pi_core.protocol.model import Model
    from pi_core.protocol.options import ResourceOptions
    from pi_core.protocol.shell import Settings
    from pi_core.protocol.signal import AbortSignal

log = logging.getLogger("pi.ui")


class NullUI:
    """The UI where there is none (print mode, tests): notifications go to the log,
    dialogs answer with their defaults (confirm: no; select and input: nothing)."""

    has_ui = False

    def notify(self, message: str, level: str = "info") -> None:
        log.log(logging.WARNING if level in ("warning", "error") else logging.INFO, "%s", message)

    # Dialogs answer with their defaults; status, widgets, title and editor need a UI.
    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None) -> bool: return False
    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None: return None
    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None) -> str | None: return None
    async def editor(self, title: str, prefill: str = "", *, timeout: float | None = None) -> str | None: return None
    def set_status(self, key: str, text: str | None = None) -> None: ...
    def set_widget(self, key: str, lines: list[str] | None = None, placement: str | None = None) -> None: ...
    def set_title(self, title: str) -> None: ...
    def set_editor_text(self, text: str) -> None: ...
    def get_editor_text(self) -> str: return ""


class Context:
    #: The harness this ctx belongs to (None for a bare :class:`Agent`).
    harness: Any = None
    #: The mode that runs (pi 1.6's ``ctx.mode``): pi's "tui", "rpc", "json" or "print",
    #: or one of ours ("acp", "serve", ...); set as the mode starts.
    mode: str = "print"

    def __init__(self, *, cwd: str, plugins: Plugins, agent: Agent | None = None, ui: Any = None,
                 events: EventBus | None = None, settings: Settings | None = None,
                 options: ResourceOptions | None = None, agent_dir: Path | None = None) -> None:
        from pi_core.paths import agent_dir as default_agent_dir
        from pi_core.protocol.options import ResourceOptions
        from pi_core.protocol.shell import NoSettings

        self.cwd, self.plugins, self.agent = cwd, plugins, agent
        self._ui, self.events = ui or NullUI(), events or EventBus()
        self.agent_dir = Path(agent_dir) if agent_dir is not None else default_agent_dir()
        self.settings = settings if settings is not None else NoSettings()
        self.options = options or ResourceOptions()
        #: Values of the plugins' command-line flags (``register_flags``), by name.
        self.flags: dict[str, Any] = {}

    @property
    def ui(self) -> Any:
        return self._ui

    @ui.setter
    def ui(self, ui: Any) -> None:
        ui = ui or NullUI()
        self._ui = self.harness.wrap_ui(ui) if self.harness is not None else ui

    def _harness(self, member: str) -> Any:
        if self.harness is None:
            raise RuntimeError(f"ctx.{member} needs a harness (this ctx belongs to a bare Agent)")
        return self.harness

    def _agent(self, member: str) -> Agent:
        if self.agent is None:
            raise RuntimeError(f"ctx.{member} needs an agent (this ctx has none)")
        return self.agent

    def get_flag(self, name: str, default: Any = None) -> Any:
        return self.flags.get(name.lstrip("-"), default)

    def is_project_trusted(self) -> bool:  # pi 1.6: the decision this run's settings carry
        return getattr(self.settings, "project_trusted", False) is True

    async def system_prompt_options(self) -> Any:  # the hook's answer (the built-in system_prompt's)
        return await self.plugins.call("system_prompt_options", ctx=self)

    # ------------------------------------------------ the agent

    @property
    def model(self) -> Model | None:
        return self.agent.model if self.agent else None

    @property
    def model_registry(self) -> Any:
        return self.harness.model_registry if self.harness is not None else None

    @property
    def scoped_models(self) -> list:
        return list(self.harness.scoped_models) if self.harness is not None else []

    def is_idle(self) -> bool:
        return not (self.harness.is_running if self.harness is not None else self.agent and self.agent.is_running)

    def has_pending_messages(self) -> bool:
        return bool(self.agent and (self.agent.steering.messages or self.agent.follow_up_queue.messages))

    @property
    def signal(self) -> AbortSignal | None:  # pi 1.6's ctx.signal (see Ctx)
        return self.harness.run_signal if self.harness is not None else None

    def abort(self) -> None:
        if self.harness is not None:
            self.harness.abort()
        elif self.agent is not None:
            self.agent.abort()

    async def set_model(self, model: Model) -> None:
        await self._harness("set_model").set_model(model)

    def get_thinking_level(self) -> str | None:
        return self.agent.thinking_level if self.agent else None

    async def set_thinking_level(self, level: str) -> None:
        await self._harness("set_thinking_level").set_thinking_level(level)

    def get_active_tools(self) -> list[str]:
        return [t.name for t in self.agent.active_tools()] if self.agent else []

    def set_active_tools(self, names: list[str]) -> None:
        self._agent("set_active_tools").set_active_tools(names)

    def get_all_tools(self) -> list:
        """Every registered tool, declared or not (pi's ``getAllTools``)."""
        return list(self.agent.tools or []) if self.agent else []

    def register_tool(self, tool) -> None:
        self._harness("register_tool").register_tool(tool)

    async def execute_tool(self, name: str, arguments: Any, *, parent_tool_call_id: str,
                           signal: Any = None, on_update: Any = None) -> Any:
        """Run a registered tool inside the call ``parent_tool_call_id``, through validation and
        the tool hooks (pi 1.6's ``ctx.executeTool``; :meth:`pi_core.loop.Agent.execute_tool`)."""
        return await self._agent("execute_tool").execute_tool(
            name, arguments, parent_tool_call_id=parent_tool_call_id, signal=signal, on_update=on_update)

    def unregister_tool(self, name: str) -> bool:
        return self._harness("unregister_tool").unregister_tool(name)

    async def spawn(self, *, model: Model | None = None, thinking_level: str | None = None,
                    system_prompt: str | None = None, options: Any = None,
                    before_start: Any = None) -> Any:
        return await self._harness("spawn").spawn(model=model, thinking_level=thinking_level,
                                                  system_prompt=system_prompt, options=options,
                                                  before_start=before_start)

    def register_provider(self, name: str, config: dict) -> None:
        self._harness("register_provider").register_provider(name, config)

    def unregister_provider(self, name: str) -> bool:
        return self._harness("unregister_provider").unregister_provider(name)

    # ------------------------------------------------ sending

    def send_user_message(self, content: Any, deliver_as: str = "steer", trigger_turn: bool = False) -> None:
        if self.harness is not None:
            self.harness.send(content, deliver_as=deliver_as, trigger_turn=trigger_turn, as_prompt=True)
        elif deliver_as == "steer":
            self._agent("send_user_message").steer(content)
        elif deliver_as == "follow_up":
            self._agent("send_user_message").follow_up(content)
        else:
            raise ValueError(f"a bare agent's ctx takes steer or follow_up, not {deliver_as!r}")

    def send_message(self, message: Any, deliver_as: str = "steer", trigger_turn: bool = False,
                     display: bool | None = None) -> None:
        if not isinstance(message, CustomMessage) and not hasattr(message, "role"):
            message = CustomMessage(custom_type="extension", content=str(message))
        if display is not None and isinstance(message, CustomMessage):
            message = attrs.evolve(message, display=display)
        if self.harness is None:
            self.send_user_message(message, deliver_as, trigger_turn)
        else:
            self.harness.send(message, deliver_as=deliver_as, trigger_turn=trigger_turn, as_prompt=False)

    async def emit(self, event: Any) -> None:
        """A plugin's session event (``auto_retry_start``, ``budget_exceeded``): the hook of its type, then subscribers."""
        await (self.harness or self._agent("emit")).emit(event)

    # ------------------------------------------------ the session

    @property
    def session(self):
        return self.harness.session if self.harness is not None else None

    @property
    def session_id(self) -> str | None:
        return self.session.id if self.session is not None else None

    def append_entry(self, custom_type: str, data: Any = None):
        return self._harness("append_entry").append_entry(custom_type, data)

    def append_context_edit(self, target_id: str, replacement: dict | None):
        """pi 1.6's context edit: ``None`` leaves the message out of what the model sees,
        ``{"content": ...}`` replaces its content; the history keeps it."""
        return self._harness("append_context_edit").append_context_edit(target_id, replacement)

    def set_session_name(self, name: str) -> None:
        self._harness("set_session_name").name_session(name)

    def set_label(self, entry_id: str, label: str | None) -> None:
        self._harness("set_label").session.append_label(entry_id, label)

    async def compact(self, instructions: str | None = None, *, reason: CompactionReason = "manual",
                      will_retry: bool = False):
        return await self._harness("compact").compact(instructions, reason=reason, will_retry=will_retry)

    async def summarize(self, system_prompt: str, text: str, max_tokens: int) -> str:
        return await self._harness("summarize").summarize(system_prompt, text, max_tokens)

    # ------------------------------------------------ session control

    async def wait_for_idle(self) -> SessionControl:
        await (self.harness or self._agent("wait_for_idle")).wait_for_idle()
        return SessionControl(cancelled=False)

    async def new_session(self, parent_session: str | None = None) -> SessionControl:
        return SessionControl(cancelled=not await self._harness("new_session").new_session(parent_session))

    async def fork(self, entry_id: str, position: ForkPosition = "before") -> SessionControl:
        text, cancelled = await self._harness("fork").fork(entry_id, position=position)
        return SessionControl(cancelled=cancelled, text=text)

    async def switch_session(self, path: str) -> SessionControl:
        return SessionControl(cancelled=not await self._harness("switch_session").switch_session(path))

    async def navigate_tree(self, entry_id: str | None, summarize: bool = False) -> SessionControl:
        moved = await self._harness("navigate_tree").navigate_tree(entry_id, summarize=summarize)
        return SessionControl(cancelled=not moved)

    async def reload(self) -> SessionControl:
        await self._harness("reload").reload()
        return SessionControl(cancelled=False)

    def shutdown(self) -> None:
        if (handler := getattr(self.harness, "on_shutdown", None)) is not None:
            handler()

    # ------------------------------------------------ processes

    async def environment(self):
        """The ``execution_environment`` hook's answer: the local machine, or a sandbox."""
        env = await self.plugins.call("execution_environment", ctx=self)
        if env is None:
            raise RuntimeError("no plugin provides an execution environment to run commands "
                               "in (the built-in local_environment plugin does)")
        return env

    async def exec(self, command: list[str] | str, *, timeout: float | None = None, cwd: str | None = None,
                   signal: AbortSignal | None = None, max_buffer: int = 256 << 20) -> ExecResult:
        env = await self.environment()
        result = await env.run(command, cwd=cwd or self.cwd, timeout=timeout, signal=signal,
                               merge_stderr=False, prefix="pi-exec", max_buffer=max_buffer)
        return ExecResult(result.output, result.stderr, result.exit_code, result.killed,
                          result.truncated, result.full_output_path)
