"""The interactive mode: a chat in the terminal (prompt_toolkit, drawn inline as pi does).

Screen, top to bottom: the chat (finished messages live in the terminal's scrollback, the
streaming message and running tools are drawn live), the queued messages and a working
line, the editor (or a dialog in its place), completions, and the footer.

While the agent works the editor stays live: Enter steers, Alt+Enter queues a follow-up,
Esc aborts (and puts queued messages back in the editor), Ctrl+C clears the editor and
twice quits, Ctrl+D on an empty editor quits.
"""

from __future__ import annotations

import asyncio
import logging
import re
import shutil
import signal
import sys
import time
from collections import deque
from typing import Any

from prompt_toolkit.application import Application, run_in_terminal
from prompt_toolkit.filters import Condition, has_completions
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input.ansi_escape_sequences import ANSI_SEQUENCES
from prompt_toolkit.key_binding import DynamicKeyBindings, KeyBindings
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import (
    ConditionalContainer,
    DynamicContainer,
    FloatContainer,
    HSplit,
    Layout,
    VSplit,
    Window,
)
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.layout.menus import CompletionsMenu
from prompt_toolkit.output.color_depth import ColorDepth
from prompt_toolkit.styles import Style
from prompt_toolkit.widgets import TextArea
from rich.padding import Padding
from rich.text import Text

from pi_core import __version__
from pi_core.app.wiring import UsageError
from pi_core.loop import AgentBusyError
from pi_core.protocol.messages import TextContent
from pi_core.protocol.model import is_unknown
from pi_plugins.interactive import commands as builtin
from pi_plugins.interactive import markdown
from pi_plugins.interactive import theme as palette
from pi_plugins.interactive.blocks import (
    AssistantBlock,
    BashBlock,
    Block,
    CustomBlock,
    HeaderBlock,
    SummaryBlock,
    TextBlock,
    ToolBlock,
    UserBlock,
    View,
    blocks_for_messages,
    user_text,
)
from pi_plugins.interactive.completion import EditorCompleter, FileIndex
from pi_plugins.interactive.controls import DrawnCursor, LinesControl
from pi_plugins.interactive.dialogs import Dialog, DialogHost
from pi_plugins.interactive.footer import footer, git_branch
from pi_plugins.interactive.keybindings import Keybindings
from pi_plugins.interactive.keys import UnbindableKey, key_sequences, parse_key
from pi_plugins.interactive.overlays import OverlayOptions, OverlayStack
from pi_plugins.interactive.paint import Painter, detect_color_system
from pi_plugins.interactive.theme import PROMPT_STYLE, THINKING_BORDER
from pi_plugins.interactive.tool_views import ToolState
from pi_plugins.interactive.transcript import Transcript
from pi_plugins.interactive.ui import InteractiveUI

log = logging.getLogger("pi.interactive")

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
DOUBLE_PRESS = 0.5  # seconds: Ctrl+C twice quits, Esc twice opens the tree
ESCAPE_WAIT = 0.05  # how long a lone Esc byte waits to become Alt+something
KEY_WAIT = 0.15  # how long Esc waits for a key completing a binding (Alt+Enter)
SIGNAL_GRACE_SECONDS = 5  # after SIGTERM/SIGHUP, how long the chat may take to end by itself
_COLOR_DEPTHS = {"truecolor": ColorDepth.TRUE_COLOR, "256": ColorDepth.DEPTH_8_BIT,
                 "standard": ColorDepth.DEPTH_4_BIT, "windows": ColorDepth.DEPTH_4_BIT,
                 None: ColorDepth.MONOCHROME}

# Shift+Enter as terminals with modified-key reporting send it (xterm, kitty, tmux's
# extended keys): a new line, like Ctrl+J.
for _sequence in ("\x1b[13;2u", "\x1b[27;2;13~"):
    ANSI_SEQUENCES.setdefault(_sequence, Keys.ControlJ)

HINTS = [("escape", "interrupt"), ("ctrl+c/ctrl+d", "clear/exit"), ("/", "commands"),
         ("!", "bash"), ("ctrl+o", "more")]


def _apply_theme(pi_app) -> tuple[dict, list[str]]:
    """Choose and apply the theme (settings ``theme``; else the last ``--theme`` given;
    else dark); returns the themes found and what was wrong on the way, for the header."""
    from pi_plugins.interactive.themes import choose, load_themes

    args, ctx = pi_app.args, pi_app.harness.ctx
    cli = list(getattr(args, "themes", []) or [])
    themes, problems = load_themes(cwd=ctx.cwd, agent_dir=ctx.agent_dir, settings=ctx.settings,
                                   cli_paths=cli, discover=not getattr(args, "no_themes", False))
    chosen, more = choose(themes, ctx.settings)
    from_cli = [t for t in themes.values() if t.from_cli]
    if not ctx.settings.get("theme") and from_cli:
        chosen = from_cli[-1]
    chosen.apply()
    return themes, problems + more


class InteractiveApp:
    """``input``/``output`` (prompt_toolkit's; default: the terminal) let a caller run the
    chat on other streams, as the dialog tests do with a pipe and an emulated screen."""

    def __init__(self, pi_app, *, input=None, output=None) -> None:
        self.pi = pi_app
        self._input, self._output = input, output
        self.harness = pi_app.harness
        self.themes, self.theme_problems = _apply_theme(pi_app)
        self.painter = Painter(detect_color_system())
        settings = self.harness.ctx.settings
        self.settings = settings
        self.view = View(hide_thinking=bool(settings.get("hideThinkingBlock", False)))
        markdown.code_block_indent = str(settings.get("markdown.codeBlockIndent", "  "))
        self.transcript = Transcript()
        self.ui = InteractiveUI(self)
        self.dialogs = DialogHost(on_change=self._dialog_changed)
        self.running = False
        self.streaming: AssistantBlock | None = None
        self.tools: dict[str, ToolBlock] = {}
        self.run_task: asyncio.Task | None = None  # a prompt run
        self.busy: str | None = None  # a compaction, branch summary or shell command Esc can stop
        self.busy_aborted = False
        self.working: str | None = None
        self.statuses: dict[str, str] = {}
        self.widgets: dict[str, tuple[list[str], str]] = {}
        self.plugin_commands: dict[str, Any] = {}
        self.renderers: dict[str, Any] = {}
        self.shortcuts: list = []
        self.files = FileIndex(self.harness.ctx.cwd)
        self.branch = git_branch(self.harness.ctx.cwd)
        self._tasks: set[asyncio.Task] = set()
        self._spinner: asyncio.Task | None = None
        self._last_ctrl_c = 0.0
        self._last_escape = 0.0
        self._printed_width: int | None = None
        #: The live area's tallest height since the scrollback was last written (terminal.clearOnShrink).
        self._tallest_live = 0
        self._clear_screen = False
        self._flush_wanted = asyncio.Event()
        self._footer_cache: tuple[Any, list[str]] | None = None
        self._menu: tuple[int, CompletionsMenu] | None = None
        self.editor_component_window: Any = None
        self._exit_code = 0
        self.keybindings = Keybindings.load(self.harness.ctx.agent_dir)
        # what plugins put on screen (ctx.ui): components, the working line, key listeners
        self.overlays = OverlayStack(self._dialog_changed)
        #: The chat's last printed lines, drawn behind overlays; while overlays show, the
        #: last ``_held_count`` of them are only there, not in the terminal's scrollback.
        self._printed_tail: deque[str] = deque(maxlen=300)
        self._backdrop_rows = 0
        self._held_count = 0
        self.footer_component: Any = None
        self.header_component: Any = None
        self.editor_component: Any = None
        self.working_message: str | None = None
        self.working_visible = True
        self.working_frames: list[str] | None = None
        self.working_interval = 0.1
        self.input_listeners: list = []
        self.pasted_images: list = []
        self.autocomplete_providers: list = []
        self.keybinding_problems: list[str] = []
        self._set_select_keys()
        self.editor = self._make_editor()
        from pi_plugins.interactive.components import Theme

        ToolBlock.theme = Theme(self)
        self.app: Application | None = None
        self._bottom: HSplit | None = None
        self._finished = False

    # ================================================================ running

    async def run(self) -> int:
        if self._input is None and not (sys.stdin.isatty() and sys.stdout.isatty()):
            raise UsageError("the interactive mode needs a terminal; use -p (print mode) or "
                             "--mode json|rpc for programs")
        harness = self.harness
        harness.set_ui(self.ui)
        harness.on_shutdown = self.exit  # ctx.shutdown()
        await self._load_plugin_parts()
        initial = self.pi.initial_prompt(read_stdin=False)
        self.app = self._make_application()
        self._start_over()
        self._show_news()
        self._populate_history()
        if is_unknown(harness.model):  # started without a model, as pi's chat can: /login gets one
            from pi_core.app.auth import no_models_available

            self.add_text(f"Warning: {no_models_available()}", "warning")
        self._flush_now()  # the header and any history, before the editor appears
        unsubscribe = harness.subscribe(self._on_event)
        loop = asyncio.get_running_loop()
        main, ended_anyway = asyncio.current_task(), []

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
            self.files.refresh()
            self.spawn(self._flusher())
            self.spawn(self._watch_theme())
            if self.pi.args.resume:
                self.spawn(builtin.resume(self, ""))
            if initial.text is not None or initial.images:
                if initial.text:
                    self.editor.buffer.history.append_string(initial.text)
                self.start_prompt(initial.text or "", list(initial.images))
                rest = self.pi.rest_messages()[1:]
                for message in rest:
                    self.harness.follow_up(message)

        try:
            await self.app.run_async(pre_run=started, set_exception_handler=False)
        except asyncio.CancelledError:
            if not ended_anyway:
                raise
            main.uncancel()
        finally:
            self.running = False
            unsubscribe()
            for signum in (signal.SIGTERM, signal.SIGHUP):
                try:
                    loop.remove_signal_handler(signum)
                except (NotImplementedError, RuntimeError):
                    pass
            await self._shut_down()
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
        if self._held_count:  # the lines drawn behind overlays are not in the scrollback yet
            held, self._held_count = list(self._printed_tail)[-self._held_count:], 0
            self._write(held)
        remaining = self.transcript.live
        self.transcript.committed = len(self.transcript.blocks)
        lines = [line for block in remaining for line in self._paint(block, self.width)]
        if lines:
            self._write(lines)
        self._finished = True

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

    async def _load_plugin_parts(self) -> None:
        plugins, ctx = self.harness.plugins, self.harness.ctx
        self.plugin_commands = {c.name: c for c in await self.harness.commands()}
        self.editor.completer.arguments = lambda: {
            name: c.argument_completions for name, c in self.plugin_commands.items()
            if getattr(c, "argument_completions", None) is not None}
        renderers = await plugins.call("register_message_renderers", ctx=ctx)
        self.renderers = {r.custom_type: r.render for r in renderers}
        self.shortcuts = await plugins.call("register_shortcuts", ctx=ctx)

    # ================================================================ screen

    @property
    def width(self) -> int:
        if self.app is not None and self.running:
            return max(self.app.output.get_size().columns, 20)
        if self._output is not None:
            return max(self._output.get_size().columns, 20)
        return max(shutil.get_terminal_size((100, 40)).columns, 20)

    @property
    def rows(self) -> int:
        if self.app is not None and self.running:
            return self.app.output.get_size().rows
        if self._output is not None:
            return self._output.get_size().rows
        return shutil.get_terminal_size((100, 40)).lines

    def _paint(self, block: Block, width: int, live: bool = False) -> list[str]:
        try:
            return block.lines(self.painter, width, self.view, live=live)
        except Exception as exc:  # one unpaintable message must not stop the chat
            log.debug("painting %r failed", block, exc_info=True)
            return ["", f" [this message could not be shown: {type(exc).__name__}: {exc}]"]

    def invalidate(self) -> None:
        if self.app is not None and self.running:
            self.app.invalidate()

    def changed(self) -> None:
        """The chat changed: print what became final, redraw the rest."""
        if self._finished:  # e.g. a plugin's goodbye at session shutdown
            self._flush_now()
            return
        self._flush_wanted.set()
        self.invalidate()

    def _write(self, lines: list[str], clear: bool = False) -> None:
        out = self._output.stdout if self._output is not None else sys.stdout
        if clear:
            out.write("\x1b[2J\x1b[H\x1b[3J")  # screen, home, scrollback
            self._printed_tail.clear()
        self._printed_tail.extend(line for line in lines if "\x1b_G" not in line and "\x1b]1337" not in line)
        if clear:
            # overlays open: the last lines are drawn behind them instead, where the
            # terminal would show them (the chat is then as tall as the terminal)
            self._held_count = min(self._backdrop_room(), len(lines)) if self.overlays.showing else 0
            lines = lines[:len(lines) - self._held_count]
        if lines:
            out.write("\n".join(lines) + "\n")
        out.flush()

    def _flush_now(self) -> None:
        """Print the committed blocks while the application is not drawing."""
        clear, self._clear_screen = self._clear_screen, False
        ready = self.transcript.take_ready()
        width = self.width
        self._printed_width = width
        self._tallest_live = 0  # prompt_toolkit sizes the live area afresh after this
        lines = [line for block in ready for line in (*self._paint(block, width), *self._image_lines(block))]
        if lines or clear:
            self._write(lines, clear)

    async def _flusher(self) -> None:
        """Prints blocks into the scrollback as they become final (one at a time, above
        the live area), and reprints everything after a reset."""
        while True:
            await self._flush_wanted.wait()
            self._flush_wanted.clear()
            if self._clear_screen or (self.transcript.live and self.transcript.live[0].final):
                if self.overlays.showing and not self._clear_screen:
                    # behind overlays the last lines are held back: print it all again, in order
                    self.transcript.reset()
                    self._clear_screen = True
                await run_in_terminal(self._flush_now, in_executor=False)

    def _before_render(self, _app) -> None:
        width = self.width
        if self._printed_width is not None and width != self._printed_width:
            self._printed_width = width
            self._start_over(reprint_only=True)
        was = self.overlays.showing
        # overlays sit on terminal rows: the chat fills the terminal behind them
        self._backdrop_rows = self._backdrop_room() if self.overlays.lay_out(width, self.rows) else 0
        if self.overlays.showing != was:  # reprint: the lines behind the overlays, or all again
            self._start_over(reprint_only=True)

    def _backdrop_room(self) -> int:
        """The rows above the live chat when the chat is as tall as the terminal."""
        return max(self.rows - len(self._live_lines(self.width)) - self._bottom_height(), 0)

    def _backdrop_lines(self, width: int) -> list[str]:
        """Behind overlays: the chat's lines the scrollback holds back, where the terminal
        showed them (the newest if the room shrank), empty rows below them."""
        rows = self._backdrop_rows
        if not rows:
            return []
        held = list(self._printed_tail)[-self._held_count:] if self._held_count else []
        return held[-rows:] if len(held) >= rows else held + [""] * (rows - len(held))

    def _after_render(self, app) -> None:
        """pi's ``terminal.clearOnShrink``: prompt_toolkit keeps the live area as tall as it
        has been (a closed dialog leaves empty rows below the footer, pi's default); with
        the setting, a shorter live area reprints the chat, so the rows go (pi's full
        redraw on shrink, which may flicker). Not while a dialog or overlay is open."""
        size = app.output.get_size()
        height = app.layout.container.preferred_height(size.columns, size.rows).preferred
        tallest, self._tallest_live = self._tallest_live, max(self._tallest_live, height)
        if (height < tallest and not self._clear_screen and self.dialogs.current is None
                and not self.overlays.entries and self.settings.get("terminal.clearOnShrink", False) is True):
            self._start_over(reprint_only=True)

    def _start_over(self, reprint_only: bool = False) -> None:
        """Rebuild the chat from the conversation (new session, tree move, compaction),
        or only reprint it (resize, view change); either way the screen is redrawn."""
        if not reprint_only:
            blocks = [self._header(), *blocks_for_messages(self.harness.messages, self.renderers,
                                                                 self._tools_by_name())]
            live = [b for b in self.transcript.live if not b.final]
            self.streaming = None if self.streaming not in live else self.streaming
            self.transcript.reset(blocks + live)
        else:
            self.transcript.reset()
        self._clear_screen = True
        self.changed()

    def _show_news(self) -> None:
        """After an update, what changed since the version last seen (not in a resumed chat)."""
        from pi_plugins.interactive.blocks import NoticeBlock
        from pi_plugins.interactive.changelog import news_since

        if self.harness.messages:
            return
        news = news_since(self.settings, __version__)
        if news is None:
            return
        if self.settings.get("collapseChangelog", False):
            latest = re.search(r"##\s+\[?(\d+\.\d+\.\d+)\]?", news)
            self.add(NoticeBlock(None, f"Updated to v{latest.group(1) if latest else __version__}. "
                                       "Use **/changelog** to view full changelog."))
        else:
            self.add(NoticeBlock("What's New", news))

    def _header(self) -> Block:
        if self.header_component is not None:
            from pi_plugins.interactive.blocks import ComponentBlock

            return ComponentBlock(self.header_component)
        return self._builtin_header()

    def _builtin_header(self) -> HeaderBlock:
        notes = list(getattr(self.pi, "notices", []))
        problems = getattr(self.harness.session, "problems", None) or []
        if problems:
            notes.append(f"{len(problems)} damaged line(s) in the session file were skipped")
        for error in getattr(self.harness.plugins, "errors", []) or []:
            notes.append(f"plugin error: {error}")
        notes += [f"warning: {problem}" for problem in self.theme_problems]
        notes += [f"warning: keybindings: {problem}" for problem in
                  self.keybindings.problems + self.keybinding_problems]
        if self.settings.get("quietStartup", False) and not getattr(self.pi.args, "verbose", False):
            return HeaderBlock(None, [], notes)
        return HeaderBlock(f"pi-harness v{__version__}", HINTS, notes, self._loaded_sections())

    def _loaded_sections(self) -> list[tuple[str, list[str]]]:
        """What this start found: context files, skills, prompt templates, plugins and
        themes of the user's or project's (the built-in ones are not listed)."""
        from pathlib import Path

        from pi_plugins.context_files import find_context_files

        ctx, sections = self.harness.ctx, []
        home = str(Path.home())

        def shown(path) -> str:
            text = str(path)
            cwd = str(ctx.cwd).rstrip("/") + "/"
            return text[len(cwd):] if text.startswith(cwd) else ("~" + text[len(home):] if text.startswith(home)
                                                                 else text)

        if getattr(ctx.options, "context_files", True):
            found = find_context_files(Path(ctx.cwd), Path(ctx.agent_dir)).files
            if found:
                sections.append(("Context", [shown(f.path) for f in found]))
        commands = list(self.plugin_commands.values())
        skills = [c.name.split(":", 1)[-1] for c in commands if c.source == "skill"]
        if skills:
            sections.append(("Skills", skills))
        prompts = [f"/{c.name}" for c in commands if c.source == "prompt"]
        if prompts:
            sections.append(("Prompts", prompts))
        plugins = [Path(i.location).name if i.source in ("file", "cli") else i.name
                   for i in self.harness.plugins.infos if i.source not in ("builtin", "api")]
        if plugins:
            sections.append(("Extensions", plugins))
        themes = [name for name, palette in self.themes.items() if palette.source != "builtin"]
        if themes:
            sections.append(("Themes", themes))
        return sections

    # ---------------------------------------------------------------- live area

    def _image_lines(self, block: Block) -> list[str]:
        """The block's images for the scrollback (kitty, iTerm2), as terminal.* say."""
        images = block.images()
        if not images or not self.settings.get("terminal.showImages", True):
            return []
        from pi_plugins.interactive.terminal_images import image_line

        columns = min(self.settings.get("terminal.imageWidthCells", 60) or 60, self.width - 2)
        lines = [image_line(getattr(i, "data", ""), getattr(i, "mime_type", ""), columns) for i in images]
        return [line for line in lines if line]

    def _live_lines(self, width: int) -> list[str]:
        lines: list[str] = []
        for block in self.transcript.live:
            lines += self._paint(block, width, live=not block.final)
        lines += self._queue_lines(width)
        above = self._widget_lines(width, "aboveEditor")
        if above:
            lines += ["", *above]
        if self.working and self.working_visible:
            frames = self.working_frames if self.working_frames is not None else SPINNER
            frame = frames[int(time.monotonic() / self.working_interval) % len(frames)] if frames else ""
            message = self.working_message if self.working_message and self.harness.agent.is_running else self.working
            text = (Text(" ") + Text.from_ansi(frame) + Text(" ") if frame else Text(" ")) + Text(message, style="muted")
            lines += [""] + self.painter.lines(text, width)
        # one row to spare: an application exactly as tall as the terminal makes it scroll
        # while redrawing, and the old frame would stay in the scrollback
        room = max(self.rows - self._bottom_height() - 1, 3)
        return lines[-room:]

    def _bottom_height(self) -> int:
        """Rows under the live chat: the editor (or dialog), completions, the footer."""
        if self._bottom is None:
            return 8
        return self._bottom.preferred_height(self.width, self.rows).preferred

    def _queue_lines(self, width: int) -> list[str]:
        agent = self.harness.agent
        steering = [user_text(m) for m in agent.steering.messages]
        follow = [user_text(m) for m in agent.follow_up_queue.messages]
        if not steering and not follow:
            return []
        parts = [Text("")]
        parts += [Text(f" Steering: {' '.join(t.split())}", style="dim", no_wrap=True, overflow="ellipsis")
                  for t in steering]
        parts += [Text(f" Follow-up: {' '.join(t.split())}", style="dim", no_wrap=True, overflow="ellipsis")
                  for t in follow]
        parts.append(Text(" ↳ alt+up to edit all queued messages", style="dim"))
        return [line for part in parts for line in self.painter.lines(part, width)]

    def _footer_lines(self, width: int) -> list[str]:
        if self.footer_component is not None:
            from pi_plugins.interactive.components import component_lines

            return component_lines(self.footer_component, width)
        harness = self.harness
        key = (width, len(harness.session), harness.session.leaf_id, harness.model.key,
               harness.thinking_level, harness.session.name, tuple(sorted(self.statuses.items())),
               self.branch, len(harness.agent.messages))
        if self._footer_cache is None or self._footer_cache[0] != key:
            providers = len({m.provider for m in harness.available_models()})
            lines = self.painter.lines(footer(harness, width, self.branch, self.statuses, providers), width)
            self._footer_cache = (key, lines)
        return self._footer_cache[1]

    def _border_style(self) -> str:
        if self.editor.text.lstrip().startswith("!"):
            return f"fg:{palette.BASH_BORDER}"
        return f"fg:{THINKING_BORDER.get(self.harness.thinking_level, THINKING_BORDER['off'])}"

    # ---------------------------------------------------------------- layout

    def _make_editor(self) -> TextArea:
        def commands():
            found = [(name, description) for name, description, _ in builtin.BUILTINS]
            taken = {name for name, _ in found}
            found += [(c.name, c.description) for c in self.plugin_commands.values() if c.name not in taken]
            return found

        hardware = Condition(lambda: bool(self.settings.get("showHardwareCursor", False)))
        area = TextArea(multiline=True, wrap_lines=True, scrollbar=False, focus_on_click=False,
                        completer=EditorCompleter(commands, self.files), complete_while_typing=True,
                        history=InMemoryHistory(), height=Dimension(min=1, max=12), dont_extend_height=True,
                        style="class:editor", input_processors=[DrawnCursor(~hardware)])
        # as pi: the terminal's cursor hidden, the editor draws its own (showHardwareCursor)
        area.window.always_hide_cursor = ~hardware

        def files_listed() -> None:  # the @ menu again, from the list that just landed
            before = area.buffer.document.text_before_cursor
            if before and not before[-1].isspace() and before.split()[-1].startswith("@"):
                area.buffer.start_completion(select_first=False)

        self.files.on_listed = files_listed
        return area

    def _make_application(self) -> Application:
        self._bindings = self._key_bindings()
        padding = lambda: Dimension.exact(self._setting_number("editorPaddingX", 0, 0, 3))
        default_editor = HSplit([
            Window(height=1),
            Window(height=1, char="─", style=self._border_style),
            VSplit([Window(width=padding), self.editor, Window(width=padding)]),
            Window(height=1, char="─", style=self._border_style),
        ])
        editor_area = DynamicContainer(lambda: self.editor_component_window or default_editor)
        has_dialog = Condition(lambda: self.dialogs.current is not None)
        self._bottom = HSplit([
            DynamicContainer(lambda: self.dialogs.current.container if self.dialogs.current else editor_area),
            ConditionalContainer(DynamicContainer(self._completions_menu), filter=has_completions & ~has_dialog),
            Window(LinesControl(lambda width: self._widget_lines(width, "belowEditor")), dont_extend_height=True),
            Window(LinesControl(self._footer_lines), dont_extend_height=True),
        ])
        chat = HSplit([Window(LinesControl(self._backdrop_lines), dont_extend_height=True),
                       Window(LinesControl(self._live_lines), dont_extend_height=True), self._bottom])
        root = FloatContainer(chat, floats=self.overlays.floats)
        app = Application(
            layout=Layout(root, focused_element=self.editor),
            input=self._input,
            output=self._output,
            key_bindings=DynamicKeyBindings(lambda: self._bindings),
            style=Style.from_dict(PROMPT_STYLE),
            full_screen=False,
            mouse_support=False,
            erase_when_done=True,
            color_depth=_COLOR_DEPTHS.get(self.painter.color_system, ColorDepth.DEPTH_8_BIT),
            min_redraw_interval=0.03,
            max_render_postpone_time=0.1,
            before_render=self._before_render,
            after_render=self._after_render,
        )
        app.ttimeoutlen = ESCAPE_WAIT
        app.timeoutlen = KEY_WAIT
        return app

    def _setting_number(self, key: str, default: int, lowest: int, highest: int) -> int:
        value = self.settings.get(key, default)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return default
        return int(min(max(value, lowest), highest))

    def _completions_menu(self) -> CompletionsMenu:
        """As many rows as ``autocompleteMaxVisible`` (3-20, default 5) allows."""
        rows = self._setting_number("autocompleteMaxVisible", 5, 3, 20)
        if self._menu is None or self._menu[0] != rows:
            self._menu = (rows, CompletionsMenu(max_height=rows, scroll_offset=1))
        return self._menu[1]

    def _dialog_changed(self, dialog: Dialog | None = None) -> None:
        """Focus: the newest overlay, else the dialog, else a plugin's editor, else ours."""
        if self.app is None:
            return
        dialog = self.dialogs.current
        if self.overlays.focused_overlay is not None:
            target = self.overlays.focused_overlay.dialog.focus_target
        elif dialog is not None:
            target = dialog.focus_target
        elif self.editor_component_window is not None:
            target = self.editor_component_window
        else:
            target = self.editor
        try:
            self.app.layout.focus(target)
        except ValueError:
            pass
        self.invalidate()

    async def show_overlay(self, dialog: Dialog, options: OverlayOptions | None = None,
                           on_handle=None) -> Any:
        """A plugin's component over the chat, where ``options`` place it, over earlier
        overlays, with the keys unless it is ``non_capturing``."""
        return await self.overlays.show(dialog, options or OverlayOptions(), on_handle)

    async def show_dialog(self, dialog: Dialog) -> Any:
        return await self.dialogs.show(dialog)

    # ================================================================ keys

    def editing(self) -> bool:
        """The editor has the keys: no dialog, overlay or plugin editor has them."""
        return (self.dialogs.current is None and self.overlays.focused_overlay is None
                and self.editor_component is None)

    def _key_bindings(self) -> KeyBindings:
        """The chat's keys, by pi's keybinding ids (keybindings.json may move any of them)."""
        kb = KeyBindings()
        editing = Condition(self.editing)
        bound: set[tuple[str, ...]] = set()

        def bind(action: str, handler) -> None:
            for spec in self.keybindings.keys(action):
                try:
                    sequences = key_sequences(spec)
                except UnbindableKey as exc:
                    self.keybinding_problems.append(f"{action}: {exc}")
                    continue
                for keys in sequences:
                    bound.add(keys)
                    kb.add(*keys, filter=editing)(lambda event, h=handler: h(event))

        bind("tui.input.submit", lambda event: self.on_enter())
        bind("app.message.followUp", lambda event: self.on_follow_up())
        bind("tui.input.newLine", lambda event: self.editor.buffer.insert_text("\n"))
        kb.add("c-j", filter=editing)(lambda event: self.editor.buffer.insert_text("\n"))
        bind("app.interrupt", lambda event: self.on_escape())
        bind("app.clear", lambda event: self.on_ctrl_c())
        kb.add(Keys.SIGINT)(lambda event: self.on_ctrl_c())

        def exit_or_delete(event):
            if not self.editor.text:
                self.exit()
            else:
                self.editor.buffer.delete()

        bind("app.exit", exit_or_delete)
        bind("app.tools.expand", lambda event: self.set_view(expand_tools=not self.view.expand_tools))
        bind("app.thinking.toggle", lambda event: self.toggle_thinking())
        bind("app.model.select", lambda event: self.spawn(builtin.model(self, "")))
        bind("app.model.cycleForward", lambda event: self.spawn(self.cycle_model(1)))
        bind("app.model.cycleBackward", lambda event: self.spawn(self.cycle_model(-1)))
        bind("app.thinking.cycle", lambda event: self.spawn(self.cycle_thinking()))

        def dequeue(event):
            count = self.restore_queue()
            self.add_text(f"Restored {count} queued message{'s' if count != 1 else ''} to the editor"
                          if count else "No queued messages to restore", "dim")

        bind("app.message.dequeue", dequeue)
        bind("app.clipboard.pasteImage", lambda event: self.spawn(self.paste_image()))
        bind("app.editor.external", lambda event: self.editor.buffer.open_in_editor(validate_and_handle=False))
        bind("app.suspend", lambda event: event.app.suspend_to_background())
        bind("app.session.new", lambda event: self.spawn(builtin.new(self, "")))
        bind("app.session.tree", lambda event: self.spawn(builtin.tree(self, "")))
        bind("app.session.fork", lambda event: self.spawn(builtin.fork(self, "")))
        bind("app.session.resume", lambda event: self.spawn(builtin.resume(self, "")))
        self._bind_editor_actions(kb, editing, bound)

        for shortcut in self.shortcuts:
            try:
                keys = parse_key(shortcut.key)
            except UnbindableKey as exc:
                self.add_text(f"Shortcut not bound: {exc}", "warning")
                continue
            kb.add(*keys, filter=editing)(lambda event, s=shortcut: self.spawn(self._call(s.handler, self.harness.ctx)))
        return kb

    def _bind_editor_actions(self, kb: KeyBindings, editing, bound: set) -> None:
        """The editor's own keys are prompt_toolkit's; an action keybindings.json moves is
        bound to its new keys here, and its old keys stop doing it."""
        from prompt_toolkit.key_binding.bindings.named_commands import get_by_name

        from pi_plugins.interactive.keybindings import DEFAULTS

        buffer = lambda: self.editor.buffer
        actions = {
            "tui.editor.cursorUp": lambda event: buffer().auto_up(count=event.arg),
            "tui.editor.cursorDown": lambda event: buffer().auto_down(count=event.arg),
            "tui.editor.pageUp": lambda event: buffer().cursor_up(count=max(self.rows // 2, 1)),
            "tui.editor.pageDown": lambda event: buffer().cursor_down(count=max(self.rows // 2, 1)),
        }
        named = {
            "tui.editor.cursorLeft": "backward-char", "tui.editor.cursorRight": "forward-char",
            "tui.editor.cursorWordLeft": "backward-word", "tui.editor.cursorWordRight": "forward-word",
            "tui.editor.cursorLineStart": "beginning-of-line", "tui.editor.cursorLineEnd": "end-of-line",
            "tui.editor.deleteCharBackward": "backward-delete-char", "tui.editor.deleteCharForward": "delete-char",
            "tui.editor.deleteWordBackward": "unix-word-rubout", "tui.editor.deleteWordForward": "kill-word",
            "tui.editor.deleteToLineStart": "unix-line-discard", "tui.editor.deleteToLineEnd": "kill-line",
            "tui.editor.yank": "yank", "tui.editor.yankPop": "yank-pop", "tui.editor.undo": "undo",
        }
        for action, command in named.items():
            actions[action] = get_by_name(command).handler
        freed: set[tuple[str, ...]] = set()
        for action, handler in actions.items():
            if not self.keybindings.customised(action):
                continue
            for spec in self.keybindings.keys(action):
                try:
                    for keys in key_sequences(spec):
                        bound.add(keys)
                        kb.add(*keys, filter=editing)(handler)
                except UnbindableKey as exc:
                    self.keybinding_problems.append(f"{action}: {exc}")
            for spec in DEFAULTS[action]:
                try:
                    freed.update(key_sequences(spec))
                except UnbindableKey:
                    pass
        for keys in freed - bound:
            kb.add(*keys, filter=editing)(lambda event: None)

    def _set_select_keys(self) -> None:
        """The lists' keys (``tui.select.*``) as keybindings.json sets them."""
        from pi_plugins.interactive import dialogs

        for action in dialogs.SELECT_KEYS:
            sequences = []
            for spec in self.keybindings.keys(action):
                try:
                    sequences += key_sequences(spec)
                except UnbindableKey as exc:
                    self.keybinding_problems.append(f"{action}: {exc}")
            dialogs.SELECT_KEYS[action] = sequences

    def reload_keybindings(self) -> None:
        """keybindings.json again (``/reload``), and the keys rebound."""
        self.keybindings.reload()
        self.keybinding_problems = []
        self._set_select_keys()
        self._bindings = self._key_bindings()
        for problem in self.keybindings.problems + self.keybinding_problems:
            self.add_text(f"Warning: keybindings: {problem}", "warning")

    async def _call(self, handler, *args) -> Any:
        result = handler(*args)
        if asyncio.iscoroutine(result) or isinstance(result, asyncio.Future):
            result = await result
        return result

    # ---------------------------------------------------------------- editor actions

    def on_enter(self) -> None:
        buffer = self.editor.buffer
        state = buffer.complete_state
        if state is not None:
            completion = state.current_completion
            typed = buffer.text
            if completion is None and typed.startswith("/") and " " not in typed and state.completions \
                    and not self._is_command(typed[1:]):
                completion = state.completions[0]
            if completion is not None:
                buffer.apply_completion(completion)
                if not buffer.text.startswith("/") or " " in buffer.text.strip():
                    return
            else:
                buffer.cancel_completion()
        text = buffer.text
        if not text.strip():
            return
        self.submit(text)

    def on_follow_up(self) -> None:
        text = self.editor.text.strip()
        if not text:
            return
        if self.run_task is not None and not text.startswith("/"):
            self.take_editor_text()
            self.spawn(self.harness.queue(text, behavior="followUp"))  # templates expand
            self.invalidate()
            return
        self.submit(self.editor.text)

    def on_escape(self) -> None:
        buffer = self.editor.buffer
        if buffer.complete_state is not None:
            buffer.cancel_completion()
            return
        if self.run_task is not None:
            self.restore_queue()
            self.harness.abort()
            return
        if self.busy == "bash":
            self.harness.abort_bash()
            return
        if self.busy:
            self.busy_aborted = True
            self.harness.abort()
            return
        if self.editor.text.lstrip().startswith("!"):
            self.set_editor_text("")
            return
        action = self.settings.get("doubleEscapeAction", "tree")
        if not self.editor.text.strip() and action in ("tree", "fork"):
            now = time.monotonic()
            if now - self._last_escape < DOUBLE_PRESS:
                self._last_escape = 0.0
                self.spawn(builtin.COMMANDS[action](self, ""))
            else:
                self._last_escape = now

    def on_ctrl_c(self) -> None:
        now = time.monotonic()
        if now - self._last_ctrl_c < DOUBLE_PRESS:
            self.exit()
            return
        self._last_ctrl_c = now
        buffer = self.editor.buffer
        buffer.cancel_completion()
        self.set_editor_text("")

    def take_editor_text(self, remember: bool = True) -> None:
        """Empty the editor after sending its text, keeping it in the prompt history."""
        self.editor.buffer.reset(append_to_history=remember)
        self.invalidate()

    def set_editor_text(self, text: str) -> None:
        buffer = self.editor.buffer
        buffer.cancel_completion()
        buffer.set_document(buffer.document.__class__(text, len(text)), bypass_readonly=True)
        self.invalidate()

    def restore_queue(self) -> int:
        steering, follow = self.harness.clear_queues()
        texts = [user_text(m) for m in [*steering, *follow]]
        if texts:
            combined = [t for t in ["\n\n".join(texts), self.editor.text] if t.strip()]
            self.set_editor_text("\n\n".join(combined))
        self.invalidate()
        return len(texts)

    def set_view(self, **changes: bool) -> None:
        from attrs import evolve

        self.view = evolve(self.view, **changes)
        self._start_over(reprint_only=True)

    def current_theme(self) -> str:
        from pi_plugins.interactive import theme as styles

        return next((name for name, p in self.themes.items() if p.styles == styles.STYLES), "dark")

    async def _watch_theme(self, interval: float = 0.5) -> None:
        """A custom theme's file edited: the chat repaints in it (pi's hot reload)."""
        import os

        def stamp() -> tuple[str, tuple | None]:
            name = self.current_theme()
            source = getattr(self.themes.get(name), "source", "builtin")
            try:
                return name, (source, os.stat(source).st_mtime_ns) if source != "builtin" else None
            except OSError:
                return name, None

        seen = stamp()
        while True:
            await asyncio.sleep(interval)
            now = stamp()
            if now[1] is not None and seen[0] == now[0] and seen[1] is not None and now[1] != seen[1]:
                self.set_theme(now[0])
                now = stamp()
            seen = now

    def theme_names(self) -> list[str]:
        return list(self.themes)

    def set_theme(self, name: str) -> None:
        """Repaint everything in another theme (``/settings``, a theme file that changed)."""
        from pi_plugins.interactive.themes import load_themes

        ctx = self.harness.ctx
        self.themes, _ = load_themes(cwd=ctx.cwd, agent_dir=ctx.agent_dir, settings=ctx.settings,
                                     cli_paths=list(getattr(self.pi.args, "themes", []) or []),
                                     discover=not getattr(self.pi.args, "no_themes", False))
        chosen = self.themes.get(name)
        if chosen is None:
            self.add_text(f"No theme named {name!r}", "error")
            return
        chosen.apply()
        self.painter = Painter(self.painter.color_system)
        self._footer_cache = None
        if self.app is not None:
            self.app.style = Style.from_dict(PROMPT_STYLE)
        self._start_over(reprint_only=True)

    def toggle_thinking(self) -> None:
        """Ctrl+T: thinking shown or hidden, kept as ``hideThinkingBlock`` as pi does."""
        hidden = not self.view.hide_thinking
        self.settings.remember("hideThinkingBlock", hidden)
        self.set_view(hide_thinking=hidden)
        self.add_text(f"Thinking blocks: {'hidden' if hidden else 'visible'}", "dim")

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
        return lambda: handler in self.input_listeners and self.input_listeners.remove(handler)

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
        self._dialog_changed()

    def write_to_terminal(self, sequence: str) -> None:
        """Send a control sequence (OSC 52, an image) straight to the terminal."""
        if self.app is not None and self.running:
            self.app.output.write_raw(sequence)
            self.app.output.flush()
        else:
            out = self._output.stdout if self._output is not None else sys.stdout
            out.write(sequence)
            out.flush()

    def set_title(self, title: str) -> None:
        if self.app is not None and self.running:
            self.app.output.set_title(title)
            self.app.output.flush()

    def _widget_lines(self, width: int, placement: str) -> list[str]:
        from pi_plugins.interactive.components import component_lines

        lines: list[str] = []
        for shown, where in self.widgets.values():
            if where == placement and not isinstance(shown, list):
                lines += component_lines(shown, width)
            elif where == placement:
                text = Text("\n").join(Text.from_ansi(line, no_wrap=True, overflow="ellipsis") for line in shown)
                lines += self.painter.lines(Padding(text, (0, 1)), width)
        return lines

    def _populate_history(self) -> None:
        """Up recalls this session's prompts, as in pi."""
        buffer = self.editor.buffer
        for message in self.harness.messages:
            if getattr(message, "role", None) == "user":
                text = user_text(message).strip()
                if text:
                    buffer.history.append_string(text)
        buffer.reset(document=buffer.document)  # the buffer re-reads its history

    def _tools_by_name(self) -> dict:
        return {t.name: t for t in self.harness.agent.tools or []}

    def _tool(self, name: str):
        return self._tools_by_name().get(name)

    def _is_command(self, name: str) -> bool:
        return name in builtin.COMMANDS or name in self.plugin_commands

    # ---------------------------------------------------------------- submitting

    def submit(self, text: str) -> None:
        """What Enter does with the editor's text."""
        stripped = text.strip()
        if stripped.startswith("/"):
            name, _, args = stripped[1:].partition(" ")
            if name in builtin.COMMANDS:
                self.take_editor_text(remember=False)
                self.spawn(builtin.COMMANDS[name](self, args.strip()))
                return
            command = self.plugin_commands.get(name)
            if command is not None and command.handler is not None:
                self.take_editor_text()
                self.spawn(self._call(command.handler, args.strip(), self.harness.ctx))
                return
        if stripped.startswith("!") and len(stripped) > 1:
            excluded = stripped.startswith("!!")
            command_line = stripped[2:].strip() if excluded else stripped[1:].strip()
            if command_line:
                if self.busy == "bash":
                    self.add_text("A shell command is already running; press Esc to stop it first.", "warning")
                    return
                self.take_editor_text()
                self.spawn(self.run_bash(command_line, excluded))
                return
        if self.busy and self.busy != "bash":
            self.add_text(f"Wait for the {self.busy} to finish (esc cancels it).", "warning")
            return
        self.take_editor_text()
        if self.run_task is not None:
            self.spawn(self.harness.queue(stripped, behavior="steer"))  # templates expand
            self.invalidate()
            return
        self.start_prompt(stripped, self._take_pasted_images(stripped))

    async def paste_image(self) -> None:
        """Ctrl+V: the clipboard's image becomes an attachment, ``[image #N]`` in the editor
        (sent with the prompt while the mark stays in the text)."""
        import base64

        from pi_core.protocol.messages import ImageContent
        from pi_plugins.interactive.clipboard import paste_image

        found = await paste_image()
        if found is None:
            self.add_text("No image in the clipboard (wl-paste or xclip finds none)", "dim")
            return
        data, mime = found
        self.pasted_images.append(ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type=mime))
        self.editor.buffer.insert_text(f"[image #{len(self.pasted_images)}]")
        self.invalidate()

    def _take_pasted_images(self, text: str) -> list:
        images = [image for number, image in enumerate(self.pasted_images, 1) if f"[image #{number}]" in text]
        self.pasted_images = []
        return images

    def start_prompt(self, text: str, images: list | None = None) -> None:
        self.run_task = self.spawn(self._run_prompt(text, images or []))

    async def _run_prompt(self, text: str, images: list) -> None:
        try:
            self.set_working("Working... (esc to interrupt)")
            await self.harness.prompt(text, images, source="interactive")
        finally:
            self.run_task = None
            self.set_working(None)
            self._settle()

    def set_working(self, label: str | None) -> None:
        """The line under the chat that says what is going on, with a spinner."""
        self.working = label
        if label and (self._spinner is None or self._spinner.done()):
            self._spinner = self.spawn(self._spin())
        self.invalidate()

    async def _spin(self) -> None:
        while self.working:
            self.invalidate()
            await asyncio.sleep(0.1)

    async def run_bash(self, command: str, excluded: bool) -> None:
        block = self.add(BashBlock(command, excluded))
        self.busy = "bash"
        try:
            message = await self.harness.run_bash(command, exclude_from_context=excluded)
        finally:
            self.busy = None
        block.finish(message)
        self.changed()

    async def busy_with(self, what: str, label: str, coroutine) -> Any:
        """Run a compaction or branch summary; Esc aborts it."""
        if self.run_task is not None:
            self.add_text(f"Wait for the agent to finish (or press esc) before the {what}.", "warning")
            coroutine.close()
            return None
        self.busy, self.busy_aborted = what, False
        self.set_working(label)
        try:
            return await coroutine
        finally:
            self.busy = None
            self.set_working(None)

    async def cycle_model(self, step: int = 1) -> None:
        result = await self.harness.cycle_model(step)
        if result is None:
            self.add_text("Only one model is available", "dim")
            return
        model, level, _ = result
        suffix = f" • {level}" if model.reasoning else ""
        self.add_text(f"Model: {model.provider}/{model.id}{suffix}", "dim")

    async def cycle_thinking(self) -> None:
        level = await self.harness.cycle_thinking_level()
        if level is None:
            self.add_text("This model does not support thinking levels", "dim")
        else:
            self.add_text(f"Thinking level: {level}", "dim")

    # ================================================================ the chat

    def add(self, block: Block) -> Block:
        self.transcript.add(block)
        self.changed()
        return block

    def add_text(self, text: str, style: str = "dim") -> None:
        self.add(TextBlock(text, style))

    def _settle(self) -> None:
        """After a run: nothing is streaming any more."""
        if self.streaming is not None:
            self.streaming.final = True
            self.streaming.changed()
            self.streaming = None
        for block in self.tools.values():
            if not block.state.finished:
                block.state.finished = True
                block.changed()
        self.tools.clear()
        self.branch = git_branch(self.harness.ctx.cwd)
        self.changed()

    def _on_event(self, event) -> None:
        kind = event.type
        if kind == "message_start":
            message = event.message
            if message.role == "user":
                text = user_text(message)
                if text.strip():
                    images = [c for c in message.content if getattr(c, "type", None) == "image"] \
                        if isinstance(message.content, list) else []
                    self.add(UserBlock(text, images))
            elif message.role == "assistant":
                self.streaming = self.add(AssistantBlock(message))
            elif message.role == "custom" and message.display:
                self.add(CustomBlock(message, self.renderers.get(message.custom_type)))
        elif kind == "message_update":
            block = self.streaming
            if block is not None:
                block.message = event.message
                block.changed()
                if event.assistant_message_event.type.startswith("toolcall"):
                    for call in event.message.tool_calls:  # a call shows while its arguments stream
                        tool = self.tools.get(call.id)
                        if tool is None:
                            self.tools[call.id] = self.add(ToolBlock(ToolState(call.id, call.name, call.arguments,
                                                                      tool=self._tool(call.name))))
                        else:
                            tool.state.args = call.arguments
                            tool.changed()
                self.invalidate()
        elif kind == "message_end":
            message = event.message
            if message.role == "assistant" and self.streaming is not None:
                block, self.streaming = self.streaming, None
                block.message, block.final = message, True
                block.changed()
                for call in message.tool_calls:
                    tool = self.tools.get(call.id)
                    if tool is None:
                        tool = self.tools[call.id] = self.add(ToolBlock(ToolState(call.id, call.name, call.arguments,
                                                                      tool=self._tool(call.name))))
                    tool.state.args = call.arguments
                    if message.stop_reason in ("aborted", "error"):
                        tool.state.content = [TextContent(text=message.error_message or "Operation aborted")]
                        tool.state.is_error = tool.state.finished = True
                    tool.changed()
                self.changed()
        elif kind == "tool_execution_start":
            tool = self.tools.get(event.tool_call_id)
            if tool is None:
                tool = self.tools[event.tool_call_id] = self.add(
                    ToolBlock(ToolState(event.tool_call_id, event.tool_name, event.args,
                                        tool=self._tool(event.tool_name))))
            tool.state.started = True
            tool.changed()
            self.invalidate()
        elif kind == "tool_execution_update":
            tool = self.tools.get(event.tool_call_id)
            partial = event.partial_result
            if tool is not None and partial is not None:
                tool.state.content, tool.state.details = partial.content, partial.details
                tool.changed()
                self.invalidate()
        elif kind == "tool_execution_end":
            tool = self.tools.pop(event.tool_call_id, None)
            if tool is not None:
                result = event.result
                tool.state.content = getattr(result, "content", None) or []
                tool.state.details = getattr(result, "details", None)
                tool.state.is_error = event.is_error
                tool.state.finished = True
                tool.changed()
                self.changed()
        elif kind == "agent_start":
            if self.working is None:  # a run a plugin started (ctx.send_user_message)
                self.set_working("Working... (esc to interrupt)")
        elif kind == "agent_end":
            if self.run_task is None and not self.busy:
                self.set_working(None)
            self._settle()
        elif kind == "queue_update":
            self.invalidate()
        elif kind == "compaction_start":
            label = ("Compacting context..." if event.reason == "manual" else
                     ("Context overflow detected, auto-compacting..." if event.reason == "overflow"
                      else "Auto-compacting...")) + " (esc to cancel)"
            self.set_working(label)
        elif kind == "compaction_end":
            self.set_working("Working... (esc to interrupt)" if self.run_task is not None else None)
            if event.aborted:
                self.add_text("Compaction cancelled" if event.reason == "manual" else
                              "Auto-compaction cancelled", "error" if event.reason == "manual" else "dim")
            elif event.result is not None:
                # as pi: the chat is rebuilt from the new context, and the compaction's
                # collapsible block (ctrl+o shows the summary) closes it
                self._start_over()
                self.add(SummaryBlock("[compaction]", f"Compacted from {event.result.tokens_before:,} tokens",
                                      event.result.summary))
            elif event.error_message:
                self.add_text(f"Compaction failed: {event.error_message}", "error")
            elif event.reason == "manual":
                self.add_text("Nothing to compact", "dim")
        elif kind == "budget_exceeded":  # the run ended before a request (--max-cost …)
            self.add_text(f"Budget reached: {event.describe()}", "error")
        elif kind == "auto_retry_start":
            self.set_working(f"Retrying ({event.attempt}/{event.max_attempts}) in "
                             f"{max(1, round(event.delay_ms / 1000))}s... (esc to cancel)")
        elif kind == "auto_retry_end":
            self.set_working("Working... (esc to interrupt)" if self.run_task is not None else None)
            if not event.success:
                self.add_text(f"Retry failed after {event.attempt} attempts: {event.final_error or 'unknown error'}",
                              "error")
            self.invalidate()

    def start_over(self) -> None:
        """The conversation changed under the chat (tree move, new or other session)."""
        self._start_over()
        self._populate_history()
