"""``ctx`` in the app: what pi's ``ExtensionContext`` gives plugins beyond the core's
(:class:`pi_core.context.HarnessContext`): model and thinking level, sending messages
with every ``deliver_as``,
compaction and summaries, session control (new, fork, switch, reload, the tree) and
processes. Each call goes to the :class:`pi_core.app.agent_session.AgentSession`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from pi_core.context import HarnessContext
from pi_core.protocol.ctx import ExecResult, SessionControl
from pi_core.protocol.messages import CustomMessage
from pi_core.protocol.signal import AbortSignal

if TYPE_CHECKING:
    from pi_core.app.agent_session import AgentSession
    from pi_core.protocol.model import Model


class AgentSessionContext(HarnessContext):
    """``ctx`` in the app: the harness's context plus model and thinking level, session
    control (waiting included), sending messages, compaction, summaries and processes."""

    harness: AgentSession
    #: The mode that runs (pi 1.6's ``ctx.mode``): pi's "tui", "rpc", "json" or "print",
    #: or one of ours ("acp", "serve", ...); set as the mode starts.
    mode: str = "print"

    @property
    def ui(self) -> Any:
        return self._ui

    @ui.setter
    def ui(self, ui: Any) -> None:
        """Any mode's UI, its dialogs announced (``ui_prompt_start`` / ``ui_prompt_end``)."""
        from pi_core.app.ui_prompts import PromptingUI

        self._ui = ui if isinstance(ui, PromptingUI) else PromptingUI(ui, self.plugins, self)

    def append_context_edit(self, target_id: str, replacement: dict | None):
        """pi 1.6's context edit (:func:`pi_core.app.context_edits.append_context_edit`):
        ``None`` leaves the message out of what the model sees, ``{"content": ...}``
        replaces its content; the history keeps it."""
        from pi_core.app.context_edits import append_context_edit

        entry = append_context_edit(self.harness.session, target_id, replacement)
        self.harness.agent.messages = list(self.harness.session.build_context().messages)
        return entry

    def set_session_name(self, name: str) -> None:
        """Name the session; plugins and the event stream hear ``session_info_changed``."""
        self.harness.session.append_session_info(name)
        self.harness.session_info_changed()

    async def set_model(self, model: Model) -> None:
        await self.harness.set_model(model)

    async def set_thinking_level(self, level: str) -> None:
        await self.harness.set_thinking_level(level)

    # ---- session control (from commands; each result has ``.cancelled``)

    async def wait_for_idle(self) -> SessionControl:
        """Wait until the agent (and any run a plugin started) has finished."""
        await self.harness.wait_for_idle()
        return SessionControl(cancelled=False)

    async def new_session(self, parent_session: str | None = None) -> SessionControl:
        return SessionControl(cancelled=not await self.harness.new_session(parent_session))

    async def fork(self, entry_id: str, position: str = "before") -> SessionControl:
        """A new session from this one: ending just ``before`` the user message
        ``entry_id`` (its text is in ``.text``, as /fork puts it in the editor) or ``at``
        (including) any entry."""
        text, cancelled = await self.harness.fork(entry_id, position=position)
        return SessionControl(cancelled=cancelled, text=text)

    async def switch_session(self, path: str) -> SessionControl:
        return SessionControl(cancelled=not await self.harness.switch_session(path))

    def register_provider(self, name: str, config: dict) -> None:
        """pi's ``registerProvider(name, config)``, at once: ``models`` replace the
        provider's (a built-in one's too), or ``base_url``/``headers`` re-point them."""
        self.harness.register_provider(name, config)

    def unregister_provider(self, name: str) -> bool:
        """pi's ``unregisterProvider(name)``: the provider's models leave the model
        registry at once (``/model``, Ctrl+P's cycle), and built-in ones it replaced come
        back; False when it had none."""
        return self.harness.unregister_provider(name)

    def shutdown(self) -> None:
        """Leave pi as its ``/quit`` does (pi's ``ctx.shutdown()``), where the mode says how
        (``harness.on_shutdown``); elsewhere nothing happens."""
        handler = getattr(self.harness, "on_shutdown", None)
        if handler is not None:
            handler()

    async def reload(self) -> SessionControl:
        """pi's /reload: plugins, skills, templates and context files found again."""
        await self.harness.reload()
        return SessionControl(cancelled=False)

    def send_user_message(self, content: Any, deliver_as: str = "steer",
                          trigger_turn: bool = False) -> None:
        """Send the model a user message (text or content blocks), pi's ``sendUserMessage``.

        While the agent runs, ``steer`` reaches it before its next request and
        ``follow_up`` when the run would otherwise end. While it is idle the message
        starts a run at once (through the ``input`` chain, ``source="extension"``).
        ``next_turn`` waits for the user's next prompt and goes in after its user
        message, unless ``trigger_turn`` starts the run now."""
        self.harness.send(content, deliver_as=deliver_as, trigger_turn=trigger_turn, as_prompt=True)

    def send_message(self, message: Any, deliver_as: str = "steer", trigger_turn: bool = False,
                     display: bool | None = None) -> None:
        """Put a plugin's message into the conversation (a :class:`CustomMessage`, or
        text made into one of type ``"extension"``), pi's ``sendMessage``. While the agent
        runs: ``steer``, ``follow_up`` or ``next_turn``. While it is idle the message joins
        the conversation and the session; ``trigger_turn`` then starts a run to answer it.
        ``display=False`` keeps it out of the chat's view (the model still reads it)."""
        if not isinstance(message, CustomMessage) and not hasattr(message, "role"):
            message = CustomMessage(custom_type="extension", content=str(message))
        if display is not None and isinstance(message, CustomMessage):
            message = attrs.evolve(message, display=display)
        self.harness.send(message, deliver_as=deliver_as, trigger_turn=trigger_turn, as_prompt=False)

    async def compact(self, instructions: str | None = None, *, reason: str = "manual"):
        return await self.harness.compact(instructions, reason=reason)

    async def summarize(self, system_prompt: str, text: str, max_tokens: int) -> str:
        return await self.harness.summarize(system_prompt, text, max_tokens)

    async def navigate_tree(self, entry_id: str | None, summarize: bool = False) -> SessionControl:
        return SessionControl(cancelled=not await self.harness.navigate_tree(entry_id, summarize=summarize))

    async def environment(self):
        """The execution environment commands run in (the ``execution_environment``
        hook's answer: the local machine, unless a plugin supplies a sandbox or such)."""
        env = await self.plugins.call("execution_environment", ctx=self)
        if env is None:
            raise RuntimeError("no plugin provides an execution environment to run commands "
                               "in (the built-in local_environment plugin does)")
        return env

    async def exec(self, command: list[str] | str, *, timeout: float | None = None,
                   cwd: str | None = None, signal: AbortSignal | None = None) -> ExecResult:
        """Run a command through the execution environment (the one runner the bash
        tool uses): a list runs as is, a string with the shell. On timeout, abort or
        cancellation the command and everything it started are killed."""
        env = await self.environment()
        result = await env.run(command, cwd=cwd or self.cwd, timeout=timeout, signal=signal,
                               merge_stderr=False, prefix="pi-exec")
        return ExecResult(result.output, result.stderr, result.exit_code, result.killed,
                          result.truncated, result.full_output_path)
