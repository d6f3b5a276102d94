"""``Ctx``: the typed shape of the ``ctx`` every hook receives, so a plugin can annotate ``ctx: Ctx``; at run
time it is a :class:`pi_core.context.Context` (a test checks that the context has every member listed here)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from pi_core.protocol.records import record

if TYPE_CHECKING:
    from pi_core.bus import EventBus
    from pi_core.plugins import Plugins
    from pi_core.protocol.events import CompactionResult
    from pi_core.protocol.model import Model
    from pi_core.protocol.options import ResourceOptions
    from pi_core.protocol.shell import Settings
    from pi_core.protocol.tools import Tool
    from pi_core.session import Session

DeliverAs = Literal["steer", "follow_up", "next_turn"]


@record
class ExecResult:
    """What ``ctx.exec`` gives: stdout and stderr (each its tail within 2,000 lines or 50 KB; the
    whole stdout in ``full_output_path`` when cut), the exit code (None when killed on timeout or
    abort; 137, killed and truncated past ``max_buffer`` bytes together, pi 1.6's ``maxBuffer``)."""

    stdout: str
    stderr: str
    code: int | None
    killed: bool = False
    truncated: bool = False
    full_output_path: str | None = None


@record
class SessionControl:
    """What a session-control call on ``ctx`` did: ``cancelled`` when a plugin said no
    (``session_before_*``); ``text`` is the forked user message's, for ``fork``."""

    cancelled: bool = False
    text: str | None = None


class UI(Protocol):
    """``ctx.ui``: dialogs and status. Where there is no UI (print, json) dialogs
    answer with their defaults at once; in rpc mode they go to the client."""

    has_ui: bool

    def notify(self, message: str, level: str = "info") -> None: ...
    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None) -> bool: ...
    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None: ...
    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None) -> str | None: ...
    async def editor(self, title: str, prefill: str = "", *, timeout: float | None = None) -> str | None: ...
    def set_status(self, key: str, text: str | None = None) -> None: ...
    def set_widget(self, key: str, lines: list[str] | None = None, placement: str | None = None) -> None: ...
    def set_title(self, title: str) -> None: ...
    def set_editor_text(self, text: str) -> None: ...
    def get_editor_text(self) -> str: ...


@runtime_checkable
class Ctx(Protocol):
    """What a plugin may use, by pi's ``ExtensionContext`` / ``ExtensionAPI``."""

    # ---- where and with what
    cwd: str
    agent_dir: Path
    settings: Settings
    options: ResourceOptions
    plugins: Plugins  # ``await ctx.plugins.call(hook, **kwargs)`` for plugin-to-plugin hooks
    ui: UI
    events: EventBus  # plugin-to-plugin messages: ``on(name, fn)``, ``await emit(name, data)``
    flags: dict[str, Any]
    harness: Any  # the SDK's and the modes' handle; plugins use the members below
    agent: Any  # the loop: model, messages, provider_for(model) (None for a bare Context)

    def get_flag(self, name: str, default: Any = None) -> Any: ...
    def is_project_trusted(self) -> bool: ...  # pi 1.6: this run's trust decision
    async def system_prompt_options(self) -> Any: ...  # pi 1.6's getSystemPromptOptions()

    # ---- the agent
    @property
    def model(self) -> Model | None: ...
    @property
    def model_registry(self) -> Any: ...  # pi's ctx.modelRegistry: the models and their keys
    @property
    def scoped_models(self) -> list[tuple[Model, str | None]]: ...  # pi 1.6: --models / enabledModels
    def is_idle(self) -> bool: ...
    def has_pending_messages(self) -> bool: ...  # pi 1.6: steering or follow-ups queued
    def abort(self) -> None: ...
    @property
    def signal(self) -> Any: ...  # pi 1.6's ctx.signal: the AbortSignal abort() sets for the work under way
    async def set_model(self, model: Model) -> None: ...
    def get_thinking_level(self) -> str | None: ...
    async def set_thinking_level(self, level: str) -> None: ...
    def get_active_tools(self) -> list[str]: ...
    def set_active_tools(self, names: list[str]) -> None: ...
    def get_all_tools(self) -> list[Tool]: ...
    def register_tool(self, tool: Tool) -> None: ...
    async def spawn(self, *, model: Model | None = None, thinking_level: str | None = None,
                    system_prompt: str | None = None, options: Any = None,
                    before_start: Any = None) -> Any: ...
    def unregister_tool(self, name: str) -> bool: ...
    async def execute_tool(self, name: str, arguments: Any, *, parent_tool_call_id: str,
                           signal: Any = None, on_update: Any = None) -> Any: ...  # a nested call

    # ---- sending
    def send_user_message(self, content: Any, deliver_as: DeliverAs = "steer",
                          trigger_turn: bool = False) -> None: ...
    def send_message(self, message: Any, deliver_as: DeliverAs = "steer", trigger_turn: bool = False,
                     display: bool | None = None) -> None: ...

    # ---- the session
    @property
    def session(self) -> Session: ...
    @property
    def session_id(self) -> str | None: ...
    def append_entry(self, custom_type: str, data: Any = None) -> Any: ...
    def set_session_name(self, name: str) -> None: ...
    def set_label(self, entry_id: str, label: str | None) -> None: ...
    async def compact(self, instructions: str | None = None, *, reason: str = "manual",
                      will_retry: bool = False) -> CompactionResult | None: ...
    async def summarize(self, system_prompt: str, text: str, max_tokens: int) -> str: ...

    # ---- session control (from commands; each result has ``.cancelled``)
    async def wait_for_idle(self) -> SessionControl: ...
    async def new_session(self, parent_session: str | None = None) -> SessionControl: ...
    async def fork(self, entry_id: str, position: Literal["before", "at"] = "before") -> SessionControl: ...
    async def navigate_tree(self, entry_id: str | None, summarize: bool = False) -> SessionControl: ...
    async def switch_session(self, path: str) -> SessionControl: ...
    async def reload(self) -> SessionControl: ...
    def shutdown(self) -> None: ...

    # ---- processes
    async def exec(self, command: list[str] | str, *, timeout: float | None = None,
                   cwd: str | None = None, max_buffer: int = 256 << 20) -> ExecResult: ...


#: The members a test checks the context (:class:`pi_core.context.Context`) has.
MEMBERS = tuple(name for name in (*Ctx.__annotations__, *vars(Ctx)) if not name.startswith("_"))
