"""The interactive mode: a chat in the terminal (prompt_toolkit, drawn inline as pi does).

Screen, top to bottom: the chat (finished messages live in the terminal's scrollback, the
streaming message and running tools are drawn live), the queued messages and a working
line, the editor (or a dialog in its place), completions, and the footer.

While the agent works the editor stays live: Enter steers, Alt+Enter queues a follow-up,
Esc aborts (and puts queued messages back in the editor), Ctrl+C clears the editor and
twice quits, Ctrl+D on an empty editor quits.

:class:`InteractiveApp` holds the chat's state, runs it, and is the one object the rest of
the mode talks to (its public names; the commands see it through :mod:`.port`). Each
concern is a collaborator it holds: :mod:`.scrollback` (what the terminal keeps),
:mod:`.live_area` (what is drawn below it), :mod:`.layout` (prompt_toolkit's screen and
focus), :mod:`.chat_keys` (which key does what), :mod:`.editor_actions` (Enter, Esc,
Ctrl+C …), :mod:`.submission` (prompts, shell commands, the working line),
:mod:`.event_blocks` (the harness's events as chat blocks), :mod:`.appearance` (themes
and the view) and :mod:`.header` (the start-up header).
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import signal
import sys
from typing import TYPE_CHECKING, Any, TypeVar

from pi_core.loop import AgentBusyError
from pi_core.protocol.model import is_unknown
from pi_plugins.cli.run_args import UsageError
from pi_plugins.interactive import appearance, markdown, terminal_capabilities, terminal_images
from pi_plugins.interactive import commands as builtin
from pi_plugins.interactive.blocks import Block, TextBlock, ToolBlock, View, blocks_for_messages, output_pad
from pi_plugins.interactive.chat_keys import ChatKeys
from pi_plugins.interactive.completion import FileIndex
from pi_plugins.interactive.dialogs import Dialog, DialogHost
from pi_plugins.interactive.editor_actions import EditorActions
from pi_plugins.interactive.event_blocks import EventBlocks, tools_by_name
from pi_plugins.interactive.footer import git_branch
from pi_plugins.interactive.fullscreen_layout import tui_mode
from pi_plugins.interactive.header import header_block, news_block
from pi_plugins.interactive.keybindings import Keybindings
from pi_plugins.interactive.layout import ChatLayout
from pi_plugins.interactive.live_area import LiveArea
from pi_plugins.interactive.overlays import OverlayOptions, OverlayStack
from pi_plugins.interactive.paint import Painter, block_lines
from pi_plugins.interactive.scrollback import Scrollback
from pi_plugins.interactive.submission import Submission
from pi_plugins.interactive.transcript import Transcript
from pi_plugins.interactive.transcript_view import TranscriptView
from pi_plugins.interactive.ui import InteractiveUI

_B = TypeVar("_B", bound=Block)  # add() gives back the block it was given

if TYPE_CHECKING:
    from prompt_toolkit.application import Application

log = logging.getLogger("pi.interactive")

SIGNAL_GRACE_SECONDS = 5  # after SIGTERM/SIGHUP, how long the chat may take to end by itself


class InteractiveApp:
    """``input``/``output`` (prompt_toolkit's; default: the terminal) let a caller run the
    chat on other streams, as the dialog tests do with a pipe and an emulated screen."""

    def __init__(self, pi_app, *, input=None, output=None) -> None:
        self.pi = pi_app
        #: prompt_toolkit's input and output the chat runs on (None: the terminal).
        self.terminal_input, self.terminal_output = input, output
        self.harness = pi_app.harness
        if input is None and output is None:  # the terminal's own: ask it for its colours, as pi 1.6
            from pi_plugins.interactive.terminal_colors import ask_terminal

            ask_terminal()
        self.themes, self.theme_problems = appearance.apply_theme(pi_app)
        settings = self.harness.ctx.settings
        self.settings = settings
        terminal_capabilities.settings = settings  # terminal.images and terminal.trueColor, as pi 1.6
        self.painter = Painter(terminal_capabilities.color_system(settings))
        self.view = View(hide_thinking=bool(settings.get("hideThinkingBlock", False)),
                         pad=output_pad(settings))
        markdown.code_block_indent = str(settings.get("markdown.codeBlockIndent", "  "))
        markdown.mermaid.mode = markdown.mermaid.mode_from(settings)
        from pi_plugins.interactive import file_links

        file_links.links_from = self.harness.ctx.cwd if file_links.hyperlinks_wanted(settings) else None
        self.transcript = Transcript()
        self.ui = InteractiveUI(self)
        self.layout = ChatLayout(self)
        self.dialogs = DialogHost(on_change=self.layout.refocus)
        self.running = False
        self.run_task: asyncio.Task | None = None  # a prompt run
        self.busy: str | None = None  # a compaction, branch summary or shell command Esc can stop
        self.busy_aborted = False
        self.working: str | None = None
        self.statuses: dict[str, str] = {}
        self.widgets: dict[str, tuple[list[str], str]] = {}
        self.plugin_commands: dict[str, Any] = {}
        #: What was wrong with the resources found (pi's "[Skill conflicts]" …).
        self.resource_problems: list = []
        self.renderers: dict[str, Any] = {}
        self.shortcuts: list = []
        self.files = FileIndex(self.harness.ctx.cwd)
        self.branch = git_branch(self.harness.ctx.cwd)
        self._tasks: set[asyncio.Task] = set()
        self._exit_code = 0
        self.crashed: BaseException | None = None  # what ended the chat from a task, if anything
        self.keybindings = Keybindings.load(self.harness.ctx.agent_dir)
        # what plugins put on screen (ctx.ui): components, the working line, key listeners
        self.overlays = OverlayStack(self.layout.refocus)
        self.footer_component: Any = None
        self.header_component: Any = None
        self.editor_component: Any = None
        self.editor_component_window: Any = None
        self.working_message: str | None = None
        self.working_visible = True
        self.working_frames: list[str] | None = None
        self.working_interval = 0.1
        self.input_listeners: list = []
        #: pi 1.6's tuiMode: the transcript scrolls in the alternate screen (fullscreen) or
        #: is printed into the terminal's scrollback (regular).
        self.fullscreen = tui_mode(pi_app) == "fullscreen"
        self.scrollback = TranscriptView(self) if self.fullscreen else Scrollback(self)
        self.switching_to: str | None = None  # the mode asked for in /settings (:mod:`.mode_switch`)
        self.flusher_task: asyncio.Task | None = None
        self.live = LiveArea(self)
        self.events = EventBlocks(self)
        from pi_plugins.interactive.appearance_reports import AppearanceReports

        self.appearance_reports = AppearanceReports(self)
        from pi_plugins.interactive.keyboard_protocol import KeyboardProtocol

        self.keyboard = KeyboardProtocol(self)  # kitty's protocol, pushed at start (terminal_colors)
        self.submission = Submission(self)
        self.actions = EditorActions(self)
        self.keys = ChatKeys(self)  # the lists' keys set, as keybindings.json says
        self.editor = self.layout.make_editor()
        from pi_plugins.interactive.components import Theme

        ToolBlock.theme = Theme(self)
        self.app: Application | None = None  # once the chat runs

    # ================================================================ running

    async def run(self) -> int:
        if self.terminal_input is None and not (sys.stdin.isatty() and sys.stdout.isatty()):
            raise UsageError("the interactive mode needs a terminal; use -p (print mode) or "
                             "--mode json|rpc for programs")
        harness = self.harness
        harness.set_ui(self.ui)
        harness.on_shutdown = self.exit  # ctx.shutdown()
        await self.load_plugin_parts()
        initial = self.pi.initial_prompt(read_stdin=False)
        self.app = self.layout.make_application()
        self.rebuild_chat()
        news = news_block(self)
        if news is not None:
            self.add(news)
        from pi_plugins.interactive.package_changelogs import updates_block

        updates = updates_block(self)  # pi 1.6's "Extension Updates", after the harness's own
        if updates is not None:
            self.add(updates)
        self.actions.populate_history()
        from pi_plugins.interactive.crash_log import announce

        announce(self)  # pi 1.6: the last crash, once, with the /bug hint
        from pi_plugins.interactive.extra_usage import watch

        watch(self)  # pi 1.6: Anthropic's extra-usage warning, once
        if is_unknown(harness.model):  # started without a model, as pi's chat can: /login gets one
            from pi_plugins.models.auth import no_models_available

            self.add_text(f"Warning: {no_models_available()}", "warning")
        self.scrollback.flush_now()  # the header and any history, before the editor appears
        unsubscribe = harness.subscribe(self.events.on_event)
        loop = asyncio.get_running_loop()
        main, ended_anyway = asyncio.current_task(), []
        assert main is not None  # run() runs in a task

        def end_anyway() -> None:
            """prompt_toolkit waits for whatever holds its terminal (``in_terminal``)
            before it ends; after a hang-up that may never come: stop waiting. The
            commands go first, so that what they set on the terminal is undone before
            the chat restores the terminal it found."""
            if self.running:
                ended_anyway.append(True)
                for task in list(self._tasks):
                    task.cancel()
                main.cancel()

        def on_signal(code: int) -> None:
            self.exit(code)
            loop.call_later(SIGNAL_GRACE_SECONDS, end_anyway)

        # SIGTERM and SIGHUP leave the chat as a quit does (session_shutdown, every child
        # stopped, the session flushed) and exit with the signal's status, 128 + its number
        for signum in (signal.SIGTERM, signal.SIGHUP):
            try:
                loop.add_signal_handler(signum, on_signal, 128 + int(signum))
            except (NotImplementedError, RuntimeError):
                pass

        def started() -> None:
            self.running = True
            self.events.status.report()  # idle: pi started
            self.appearance_reports.start()  # a light/dark switch of the terminal repaints (pi 1.6)
            self.keyboard.start()  # kitty's protocol or modifyOtherKeys, decoded for prompt_toolkit
            if terminal_images.protocol() and not os.environ.get("TMUX"):
                self.write_to_terminal(terminal_images.CELL_SIZE_QUERY)  # pi 1.6 sizes images by it
            self.files.refresh()
            self.flusher_task = self.spawn(self.scrollback.flusher())
            self.spawn(appearance.watch_theme(self))
            if self.pi.args.resume:
                self.spawn(builtin.resume(self, ""))
            if initial.text is not None or initial.images:
                if initial.text:
                    self.editor.buffer.history.append_string(initial.text)
                self.submission.start_prompt(initial.text or "", list(initial.images))
                rest = self.pi.rest_messages()[1:]
                for message in rest:
                    self.harness.follow_up(message)

        try:
            await self.app.run_async(pre_run=started, set_exception_handler=False)
            while self.switching_to is not None:  # /settings changed the TUI mode: the same chat in it
                from pi_plugins.interactive import mode_switch

                mode, self.switching_to = self.switching_to, None
                mode_switch.remount(self, mode)
                await self.app.run_async(pre_run=lambda: mode_switch.resumed(self), set_exception_handler=False)
        except asyncio.CancelledError:
            if not ended_anyway:
                raise
            main.uncancel()
        finally:
            self.running = False
            unsubscribe()
            self.events.status.clear()
            self.appearance_reports.stop()
            self.keyboard.stop()
            for signum in (signal.SIGTERM, signal.SIGHUP):
                try:
                    loop.remove_signal_handler(signum)
                except (NotImplementedError, RuntimeError):
                    pass
            await self._shut_down()
        if self._exit_code == 0:  # a quit, not a signal: how to come back, as pi 1.6
            from pi_plugins.interactive.resume_hint import print_resume_hint

            print_resume_hint(self)
        return self._exit_code

    async def _shut_down(self) -> None:
        """Stop what runs, then print what the scrollback does not have yet."""
        self.dialogs.cancel_all()
        self.overlays.cancel_all()
        if self.run_task is not None or self.busy:
            self.harness.abort()
            self.harness.abort_bash()
        if self.run_task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self.run_task), 5)
            except TimeoutError:
                pass
        for task in list(self._tasks):
            task.cancel()
        self.scrollback.finish()

    def exit(self, code: int = 0) -> None:
        self._exit_code = code
        self.dialogs.cancel_all()
        self.overlays.cancel_all()
        if self.run_task is not None:
            self.harness.abort()
        if self.app is not None and self.app.is_running and not self.app.is_done:
            self.app.exit()

    def spawn(self, coroutine) -> asyncio.Task:
        """Run something beside the UI; a failure shows as an error in the chat."""
        task = asyncio.get_running_loop().create_task(self._guarded(coroutine))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _guarded(self, coroutine) -> Any:
        try:
            return await coroutine
        except asyncio.CancelledError:
            raise
        except AgentBusyError as exc:
            self.add_text(str(exc), "warning")
        except Exception as exc:
            log.debug("interactive task failed", exc_info=True)
            self.add_text(f"Error: {exc}", "error")
        except BaseException as exc:  # KeyboardInterrupt, SystemExit: asyncio ends the chat with it
            self.crashed = exc  # recorded in the crash log (pi 1.6; see run_interactive)
            raise

    async def load_plugin_parts(self) -> None:
        """The plugins' commands, message renderers and shortcuts (again on ``/reload``)."""
        plugins, ctx = self.harness.plugins, self.harness.ctx
        self.plugin_commands = {c.name: c for c in await self.harness.commands()}
        completer: Any = self.editor.completer  # ours (EditorCompleter), or a plugin's
        completer.arguments = lambda: {
            name: c.argument_completions for name, c in self.plugin_commands.items()
            if getattr(c, "argument_completions", None) is not None}
        renderers = await plugins.call("register_message_renderers", ctx=ctx)
        self.renderers = {r.custom_type: r.render for r in renderers}
        self.shortcuts = await plugins.call("register_shortcuts", ctx=ctx)
        from pi_plugins.interactive import render_hooks  # Markdown transformers, entry and tool renderers

        await render_hooks.load(self)
        from pi_plugins.interactive.resource_problems import gather

        self.resource_problems = await gather(ctx, self.themes, self.theme_problems)

    # ================================================================ the screen

    @property
    def width(self) -> int:
        if self.app is not None and self.running:
            return max(self.app.output.get_size().columns, 20)
        if self.terminal_output is not None:
            return max(self.terminal_output.get_size().columns, 20)
        return max(shutil.get_terminal_size((100, 40)).columns, 20)

    def rendered_lines(self) -> list[str]:
        """The lines drawn under the scrollback at this width: the live blocks, the editor
        and the footer (what ``/debug`` writes, as pi 1.6's ``ui.render``: what is already
        printed into the scrollback is not drawn again)."""
        from pi_plugins.interactive.fullscreen_layout import bottom_lines

        width = self.width
        lines = [line for block in self.transcript.live for line in block.lines(self.painter, width, self.view)]
        return lines + bottom_lines(self, width)

    @property
    def rows(self) -> int:
        if self.app is not None and self.running:
            return self.app.output.get_size().rows
        if self.terminal_output is not None:
            return self.terminal_output.get_size().rows
        return shutil.get_terminal_size((100, 40)).lines

    def paint(self, block: Block, width: int, live: bool = False) -> list[str]:
        """The block's lines at ``width`` in the current view."""
        return block_lines(block, self.painter, width, self.view, live=live)

    def invalidate(self) -> None:
        if self.app is not None and self.running:
            self.app.invalidate()

    def changed(self) -> None:
        """The chat changed: print what became final, redraw the rest."""
        self.scrollback.changed()

    async def show_overlay(self, dialog: Dialog, options: OverlayOptions | None = None,
                           on_handle=None) -> Any:
        """A plugin's component over the chat, where ``options`` place it, over earlier
        overlays, with the keys unless it is ``non_capturing``."""
        return await self.overlays.show(dialog, options or OverlayOptions(), on_handle)

    async def show_dialog(self, dialog: Dialog) -> Any:
        return await self.dialogs.show(dialog)

    def editing(self) -> bool:
        """The editor has the keys: no dialog, overlay or plugin editor has them."""
        return (self.dialogs.current is None and self.overlays.focused_overlay is None
                and self.editor_component is None)

    # ================================================================ the chat

    def add(self, block: _B) -> _B:
        self.transcript.add(block)
        self.changed()
        return block

    def add_text(self, text: str, style: str = "dim") -> None:
        self.add(TextBlock(text, style))

    def rebuild_chat(self, summary_notices: bool = True) -> None:
        """Rebuild the chat from the conversation (new session, tree move, compaction);
        the screen is redrawn. ``summary_notices``: what each summary cost, after it."""
        from pi_plugins.interactive.cache_notices import with_cache_notices, with_summary_notices
        from pi_plugins.interactive.render_hooks import with_entries  # plugins' entries between the messages

        tools = tools_by_name(self.harness)
        blocks = with_entries(self.harness.messages, self.harness.session.path(),
                              lambda messages: blocks_for_messages(messages, self.renderers, tools))
        blocks = with_summary_notices(blocks, self.harness) if summary_notices else blocks
        blocks = [header_block(self), *with_cache_notices(blocks, self.harness)]  # misses and warms, derived again
        live = [b for b in self.transcript.live if not b.final]
        if self.events.streaming not in live:
            self.events.streaming = None
        self.scrollback.reprint(blocks + live)

    def start_over(self) -> None:
        """The conversation changed under the chat (tree move, new or other session)."""
        self.rebuild_chat()
        self.actions.populate_history()

    # ================================================================ what the editor sends

    def submit(self, text: str) -> None:
        """What Enter does with the editor's text."""
        self.submission.submit(text)

    def set_working(self, label: str | None) -> None:
        """The line under the chat that says what is going on, with a spinner."""
        self.submission.set_working(label)

    async def busy_with(self, what: str, label: str, coroutine) -> Any:
        """Run a compaction or branch summary; Esc aborts it."""
        return await self.submission.busy_with(what, label, coroutine)

    def set_editor_text(self, text: str) -> None:
        self.actions.set_text(text)

    def reload_keybindings(self) -> None:
        """keybindings.json again (``/reload``), and the keys rebound."""
        self.keys.reload()

    # ================================================================ themes and view

    def set_view(self, **changes: Any) -> None:  # View fields: a bool, or the thinking label
        appearance.set_view(self, **changes)

    def theme_names(self) -> list[str]:
        return list(self.themes)

    def current_theme(self) -> str:
        return appearance.current_theme(self)

    def set_theme(self, name: str) -> None:
        """Repaint everything in another theme (``/settings``, a theme file that changed)."""
        appearance.set_theme(self, name)

    # ================================================================ what plugins put on screen

    def set_status(self, key: str, text: str | None) -> None:
        if text:
            self.statuses[key] = text
        else:
            self.statuses.pop(key, None)
        self.invalidate()

    def set_widget(self, key: str, lines: Any, placement: str) -> None:
        """Lines, or ``factory(tui, theme)`` making a component; None removes the widget."""
        from pi_plugins.interactive.components import Theme, TuiHandle

        self.widgets.pop(key, None)
        if callable(lines):
            self.widgets[key] = (lines(TuiHandle(self), Theme(self)), placement)
        elif lines:
            self.widgets[key] = ([str(line) for line in lines], placement)
        self.invalidate()

    def listen_to_input(self, handler) -> Any:
        """``ctx.ui.on_terminal_input``: from the first listener on, the application reads
        its keys through :class:`ListeningInput` (the terminal stays attached as it was;
        only where the keys are read from changes)."""
        from pi_plugins.interactive.components import ListeningInput

        if self.app is not None and not isinstance(self.app.input, ListeningInput):
            self.app.input = ListeningInput(self.app.input, self.input_listeners)
        self.input_listeners.append(handler)

        def remove() -> None:
            if handler in self.input_listeners:
                self.input_listeners.remove(handler)

        return remove

    def set_editor_component(self, factory: Any) -> None:
        """A plugin's editor in place of ours (``factory(tui, theme, keybindings)``); None: ours."""
        from pi_plugins.interactive.components import (
            KeybindingsView,
            Theme,
            TuiHandle,
            component_window,
            handle_key,
        )

        if factory is None:
            self.editor_component = self.editor_component_window = None
        else:
            component = factory(TuiHandle(self), Theme(self), KeybindingsView(self.keybindings))

            def key(data: str) -> None:
                handle_key(component, data)
                self.invalidate()

            self.editor_component, self.editor_component_window = component, component_window(component, key)
        self.layout.refocus()

    def write_to_terminal(self, sequence: str) -> None:
        """Send a control sequence (OSC 52, an image) straight to the terminal."""
        if self.app is not None and self.running:
            self.app.output.write_raw(sequence)
            self.app.output.flush()
        else:
            out = self.terminal_output.stdout if self.terminal_output is not None else sys.stdout
            out.write(sequence)
            out.flush()

    def set_title(self, title: str) -> None:
        if self.app is not None and self.running:
            self.app.output.set_title(title)
            self.app.output.flush()
