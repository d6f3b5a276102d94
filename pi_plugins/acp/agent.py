"""The agent side of ACP over the harness ``pi`` built for this run.

One harness, one session at a time (as one pi process has): ``session/new`` starts a
new session, ``session/load`` switches to a saved one (replaying its history and
restoring its model), and the ACP ``sessionId`` is the session header's id. Modes are
the thinking levels; the model is a config option (category ``model``, values
``provider/id``, set with ``session/set_config_option``) and ``session/set_model``,
which pi-acp's clients use. Slash commands (skills, templates, plugin commands) are
offered as available commands, without the slash. The process ends when stdin closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from pathlib import Path
from typing import Any

from pi_core import __version__, hookimpl
from pi_core.protocol.messages import ImageContent
from pi_plugins.acp.ui import AcpUI
from pi_plugins.acp.updates import UpdateWriter, kind_of
from pi_plugins.cli.run_args import UsageError

log = logging.getLogger("pi.acp")

THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
#: Handled here, as pi-acp handles it (compaction is no prompt for the model).
BUILTIN_COMMANDS = {"compact": "Compact the session's context (optional instructions)"}


class PendingToolCall:
    """A plugin: remembers which tool call ``before_tool_call`` is deciding, so a
    permission request names it. Runs first, decides nothing."""

    def __init__(self, ui: AcpUI) -> None:
        self.ui = ui

    @hookimpl(tryfirst=True)
    def before_tool_call(self, event, ctx):
        self.ui.pending_tool_call = {"id": event.tool_call_id, "kind": kind_of(event.tool_name),
                                     "arguments": event.arguments}
        return None


class PiAcpAgent:
    def __init__(self, app) -> None:
        self.app = app
        self.harness = app.harness
        self.conn: Any = None
        self.ui = AcpUI(lambda: self.conn, lambda: self.session_id)
        self.harness.set_ui(self.ui)
        self.harness.model_is_explicit = False  # a loaded session brings back its own model
        self.app.plugins.register(PendingToolCall(self.ui), "acp_pending_tool_call", source="builtin")
        self.session_id: str | None = None
        self._fresh = True  # the harness's session is the one build_app opened, unused
        self._prompt_task: asyncio.Task | None = None

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    # ------------------------------------------------------------ set-up

    async def initialize(self, protocol_version: int, client_capabilities=None, client_info=None, **kwargs):
        from acp.schema import (
            AgentCapabilities,
            Implementation,
            InitializeResponse,
            McpCapabilities,
            PromptCapabilities,
        )

        return InitializeResponse(
            protocol_version=1 if protocol_version >= 1 else protocol_version,
            agent_info=Implementation(name="pi-harness", title="pi", version=__version__),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, audio=False, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=False, sse=False)),
            auth_methods=[])

    async def authenticate(self, method_id: str, **kwargs):
        return None

    async def new_session(self, cwd: str, mcp_servers=None, additional_directories=None, **kwargs):
        from acp import RequestError
        from acp.schema import NewSessionResponse

        await self._idle()
        moved = self._enter(cwd)
        if moved is not None or not self._fresh or len(self.harness.session):
            if not await self.harness.new_session():
                self._leave(moved)
                raise RequestError.invalid_request({"reason": "a plugin refused a new session"})
        self._fresh = False
        self.session_id = self.harness.session.id
        self._announce_commands()
        return NewSessionResponse(session_id=self.session_id, modes=self._modes(),
                                  config_options=self._config_options())

    async def load_session(self, cwd: str, session_id: str, mcp_servers=None, additional_directories=None,
                           **kwargs):
        from acp import RequestError
        from acp.schema import LoadSessionResponse

        from pi_plugins.session_listing.listing import find_session

        await self._idle()
        moved = self._enter(cwd)
        if self.harness.session.id != session_id or moved is not None:
            found = find_session(session_id, self.harness.ctx.cwd, self._sessions_dir())
            if found is None or not Path(found.path).is_file():
                self._leave(moved)
                raise RequestError.resource_not_found(f"no session {session_id}")
            if not await self.harness.switch_session(str(found.path)):
                self._leave(moved)
                raise RequestError.invalid_request({"reason": "a plugin refused to switch sessions"})
        self._fresh = False
        self.session_id = self.harness.session.id
        await UpdateWriter(self.harness.ctx.cwd, self._send).replay(list(self.harness.messages))
        self._announce_commands()
        return LoadSessionResponse(modes=self._modes(), config_options=self._config_options())

    # ------------------------------------------------------------ prompting

    async def prompt(self, session_id: str, prompt: list, **kwargs):
        from acp.helpers import update_agent_message_text
        from acp.schema import PromptResponse

        self._check(session_id)
        text, images = _prompt_parts(prompt)
        if text.strip().split(" ", 1)[0] == "/compact":
            return await self._compact(text.strip()[len("/compact"):].strip() or None)
        writer = UpdateWriter(self.harness.ctx.cwd, self._send)
        unsubscribe = self.harness.subscribe(writer.event)
        self._prompt_task = asyncio.current_task()
        try:
            await self.harness.prompt(text, images, source="acp")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # refused (no model, no key, busy): the editor shows why
            await self._send(update_agent_message_text(f"Error: {exc}"))
            return PromptResponse(stop_reason="end_turn")
        finally:
            unsubscribe()
            self._prompt_task = None
            self.ui.pending_tool_call = None
        last = self.harness.messages[-1] if self.harness.messages else None
        stop = getattr(last, "stop_reason", None)
        if stop == "aborted":
            return PromptResponse(stop_reason="cancelled")
        if stop == "error":
            said = getattr(last, "error_message", None)  # last: the failed answer
            await self._send(update_agent_message_text(f"Error: {said or 'the request failed'}"))
        if stop == "length":
            return PromptResponse(stop_reason="max_tokens")
        return PromptResponse(stop_reason="end_turn")

    async def _compact(self, instructions: str | None):
        from acp.helpers import update_agent_message_text
        from acp.schema import PromptResponse

        result = await self.harness.compact(instructions)
        if result is None:
            text = "Nothing was compacted (the session is empty or already compacted, or compaction failed or was cancelled)."
        else:
            text = f"Compaction completed.\nTokens before: {result.tokens_before}\n\n{result.summary}"
        await self._send(update_agent_message_text(text))
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs) -> None:
        if session_id == self.session_id:
            self.harness.abort()

    # ------------------------------------------------------------ modes and models

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs):
        from acp import RequestError
        from acp.helpers import update_current_mode

        self._check(session_id)
        if mode_id not in self.harness.thinking_levels():
            raise RequestError.invalid_params({"modeId": mode_id, "reason": "not a thinking level of this model"})
        await self.harness.set_thinking_level(mode_id)
        await self._send(update_current_mode(self.harness.thinking_level))
        return None

    async def set_config_option(self, config_id: str, session_id: str, value, **kwargs):
        from acp import RequestError
        from acp.schema import SetSessionConfigOptionResponse

        self._check(session_id)
        if config_id != "model":
            raise RequestError.invalid_params({"configId": config_id, "reason": "unknown option"})
        await self._set_model(str(value))
        return SetSessionConfigOptionResponse(config_options=self._config_options())

    async def set_session_model(self, params: dict) -> dict:
        """``session/set_model`` (``{sessionId, modelId}``): the protocol's older way."""
        self._check(params.get("sessionId"))
        await self._set_model(str(params.get("modelId", "")))
        return {}

    async def _set_model(self, key: str) -> None:
        from acp import RequestError
        from acp.helpers import update_current_mode

        model = next((m for m in self.app.registry.available() if m.key == key), None)
        if model is None:
            raise RequestError.invalid_params({"value": key, "reason": "no such model with a key"})
        before = self.harness.thinking_level
        await self.harness.set_model(model)
        if self.harness.thinking_level != before:
            await self._send(update_current_mode(self.harness.thinking_level))

    def _modes(self):
        from acp.schema import SessionMode, SessionModeState

        levels = self.harness.thinking_levels()
        return SessionModeState(
            current_mode_id=self.harness.thinking_level,
            available_modes=[SessionMode(id=level, name=f"Thinking: {level}") for level in levels])

    def _config_options(self) -> list:
        from acp.schema import SessionConfigOptionSelect, SessionConfigSelectOption

        models = self.app.registry.available()
        current = self.harness.model.key
        options = [SessionConfigSelectOption(value=m.key, name=m.name or m.id, description=m.key)
                   for m in models]
        if current not in {m.key for m in models}:
            options.insert(0, SessionConfigSelectOption(value=current, name=self.harness.model.name or current))
        return [SessionConfigOptionSelect(type="select", id="model", name="Model", category="model",
                                          current_value=current, options=options)]

    # ------------------------------------------------------------ commands

    def _announce_commands(self) -> None:
        """After the response (an editor ignores updates for a session it does not know yet)."""
        asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(self._send_commands()))

    async def _send_commands(self) -> None:
        from acp.schema import AvailableCommand, AvailableCommandsUpdate, UnstructuredCommandInput

        commands = []
        for name, description in BUILTIN_COMMANDS.items():
            commands.append(AvailableCommand(name=name, description=description,
                                             # pydantic takes the root model's value
                                             input=UnstructuredCommandInput(  # type: ignore[arg-type]
                                                 hint="optional instructions")))
        for command in await self.harness.commands():
            hint = command.argument_hint
            commands.append(AvailableCommand(
                name=command.name, description=command.description or command.name,
                # pydantic takes the root model's value for the RootModel AvailableCommandInput
                input=UnstructuredCommandInput(hint=hint) if hint else None))  # type: ignore[arg-type]
        await self._send(AvailableCommandsUpdate(session_update="available_commands_update",
                                                 available_commands=commands))

    # ------------------------------------------------------------ the session's folder

    def _enter(self, cwd: str):
        """Make the editor's ``cwd`` the folder tools, bash, diffs, resources and the
        session file belong to (pi-acp starts one pi in it per session). Returns what
        :meth:`_leave` needs to go back, or None when the folder is the current one."""
        from acp import RequestError

        folder = os.path.abspath(os.path.expanduser(str(cwd or "")))
        if not cwd or not os.path.isdir(folder):
            raise RequestError.invalid_params({"cwd": cwd, "reason": "not an existing folder"})
        session = self.harness.session
        if folder == os.path.abspath(str(self.harness.ctx.cwd)):
            return None
        before = (self.harness.ctx.cwd, session, session.sessions_dir)
        self.harness.ctx.cwd = folder
        if session.file is not None:
            # harness.new_session files the new session where the current one's folder
            # says; the folder of the project the editor opened, unless one was chosen
            session.sessions_dir = self._sessions_dir()
        self._forget_resources()
        return before

    def _leave(self, before) -> None:
        if before is None:
            return
        cwd, session, sessions_dir = before
        self.harness.ctx.cwd = cwd
        session.sessions_dir = sessions_dir
        self._forget_resources()

    def _sessions_dir(self) -> Path:
        """``--session-dir`` / ``PI_CODING_AGENT_SESSION_DIR`` / ``sessionDir`` when
        given, else the current folder's own sessions folder."""
        from pi_core.session.locations import session_dir_for
        from pi_plugins.cli.sessions import sessions_dir

        chosen = sessions_dir(self.app.args, self.harness.ctx.settings)
        return chosen if chosen is not None else session_dir_for(self.harness.ctx.cwd)

    def _forget_resources(self) -> None:
        """Context files, skills, templates and the system prompt's folder are found
        again for the new folder at the next prompt."""
        with contextlib.suppress(ImportError):
            from pi_plugins import resources

            resources.reload(self.harness.ctx)

    # ------------------------------------------------------------ helpers

    async def _send(self, update: Any) -> None:
        if self.conn is None or self.session_id is None:
            return
        try:
            await self.conn.session_update(session_id=self.session_id, update=update)
        except Exception as exc:  # the editor went away: the run goes on, unseen
            log.debug("session/update failed: %s", exc)

    def _check(self, session_id: str | None) -> None:
        from acp import RequestError

        if session_id != self.session_id:
            raise RequestError.invalid_params({"sessionId": session_id, "reason": "unknown session"})

    async def _idle(self) -> None:
        if self.harness.is_running:
            self.harness.abort()
            await self.harness.wait_for_idle()

    async def ext_method(self, method: str, params: dict) -> dict:
        from acp import RequestError

        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict) -> None:
        return None


def _prompt_parts(blocks: list) -> tuple[str, list[ImageContent]]:
    """The prompt's text (resources as pi's ``<file>`` blocks) and its images."""
    parts, images = [], []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(block.text)
        elif kind == "image":
            images.append(ImageContent(data=block.data, mime_type=block.mime_type))
        elif kind == "resource_link":
            parts.append(f"@{_uri_path(block.uri)}")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if text is not None:
                parts.append(f'<file name="{_uri_path(resource.uri)}">\n{text}\n</file>')
    return "\n".join(parts), images


def _uri_path(uri: str) -> str:
    return uri[len("file://"):] if uri.startswith("file://") else uri


async def run_acp(app) -> int:
    """``pi --mode acp``: serve one editor on stdin/stdout until stdin closes."""
    try:
        from acp.agent.connection import AgentSideConnection
        from acp.router import Route
        from acp.stdio import stdio_streams
    except ImportError as exc:
        raise UsageError("ACP mode needs the agent-client-protocol package: "
                         "pip install 'pi-harness[acp]'") from exc
    reader, writer = await stdio_streams()
    agent = PiAcpAgent(app)
    saved, sys.stdout = sys.stdout, sys.stderr  # only protocol lines on the real stdout
    # The agent answers the methods pi supports; the connection answers the rest of the
    # acp.Agent protocol (list_sessions …) "method not found".
    conn = AgentSideConnection(agent, writer, reader,  # type: ignore[arg-type]
                               listening=False, use_unstable_protocol=True)
    handler = getattr(getattr(conn, "_conn", None), "_handler", None)
    if handler is not None and hasattr(handler, "add_route"):  # session/set_model, not in the schema
        handler.add_route(Route(method="session/set_model", func=agent.set_session_model, kind="request"))
    try:
        await conn.listen()
    finally:
        app.harness.abort()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(app.harness.wait_for_idle(), 3)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(conn.close()), 2)
        sys.stdout = saved
    return 0
