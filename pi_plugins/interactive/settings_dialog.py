"""``/settings``: pi's settings dialog. Enter on an option with a few values moves it to
the next one, on one with many (thinking level, theme) opens a list of them; every change
takes effect and is saved to the global settings.json at once. Esc closes the dialog."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from attrs import define
from rich.text import Text

from pi_plugins.interactive.dialogs import Item, ListDialog

if TYPE_CHECKING:
    from pi_plugins.interactive.port import ChatPort

ON_OFF = ["true", "false"]
MODES = ["one-at-a-time", "all"]


@define
class Option:
    id: str
    label: str
    description: str
    values: Callable[[ChatPort], list[str]]
    current: Callable[[ChatPort], str]
    change: Callable[[ChatPort, str], Awaitable[None] | None]


def _flag(key: str, default: bool = False):
    return lambda tui: "true" if tui.settings.get(key, default) else "false"


def _save(key: str, kind=str):
    def change(tui: ChatPort, value: str) -> None:
        tui.settings.remember(key, (value == "true") if kind is bool else kind(value))
        tui.invalidate()
    return change


def _quiet_startup_value(tui: ChatPort) -> str:
    value = tui.settings.get("quietStartup", False)
    return "header" if value == "header" else "true" if value else "false"


def _save_quiet_startup(tui: ChatPort, value: str) -> None:  # pi 1.6: true, false or "header"
    tui.settings.remember("quietStartup", "header" if value == "header" else value == "true")


def _tui_mode(tui: ChatPort) -> str:
    switching = getattr(tui, "switching_to", None)  # the dialog reopens before the switch is done
    return switching or ("fullscreen" if getattr(tui, "fullscreen", False) else "regular")


def _switch_tui_mode(tui: ChatPort, value: str) -> None:
    from pi_plugins.interactive import mode_switch

    if not mode_switch.request(tui, value):  # type: ignore[arg-type]  # the chat itself
        tui.add_text(mode_switch.OVERLAYS_OPEN, "warning")
        return
    tui.settings.remember("tuiMode", value)


async def _thinking(tui: ChatPort, value: str) -> None:
    await tui.harness.set_thinking_level(value)
    tui.settings.remember("defaultThinkingLevel", value)  # /settings edits the saved default


def _queue_mode(queue: str, key: str):
    def change(tui: ChatPort, value: str) -> None:
        getattr(tui.harness.agent, queue).mode = value
        tui.settings.remember(key, value)
    return change


def _auto_compact(tui: ChatPort, value: str) -> None:
    tui.settings.set("compaction.enabled", value == "true")
    tui.settings.remember("compaction.enabled", value == "true")


def _hide_thinking(tui: ChatPort, value: str) -> None:
    tui.settings.remember("hideThinkingBlock", value == "true")
    tui.set_view(hide_thinking=value == "true")


def _theme(tui: ChatPort, value: str) -> None:
    tui.set_theme(value)
    tui.settings.remember("theme", value)


OPTIONS = [
    Option("thinking", "Thinking level", "How much the model reasons before it answers",
           lambda tui: tui.harness.thinking_levels() or ["off"], lambda tui: tui.harness.thinking_level, _thinking),
    Option("theme", "Theme", "The colours of the chat",
           lambda tui: sorted(tui.theme_names()), lambda tui: tui.settings.get("theme") or "dark", _theme),
    Option("autocompact", "Auto-compact", "Compact the context when it gets too large",
           lambda tui: ON_OFF, lambda tui: "true" if tui.settings.get("compaction.enabled", True) else "false", _auto_compact),
    Option("steering-mode", "Steering mode",
           "Enter while the agent works: 'one-at-a-time' delivers one message per turn, 'all' all at once",
           lambda tui: MODES, lambda tui: tui.harness.agent.steering.mode, _queue_mode("steering", "steeringMode")),
    Option("follow-up-mode", "Follow-up mode",
           "Alt+Enter queues for when the agent stops: 'one-at-a-time' or 'all' at once",
           lambda tui: MODES, lambda tui: tui.harness.agent.follow_up_queue.mode,
           _queue_mode("follow_up_queue", "followUpMode")),
    Option("transport", "Transport", "Preferred transport of providers that have several",
           lambda tui: ["sse", "websocket", "websocket-cached", "auto"],
           lambda tui: tui.settings.get("transport") or "auto",
           _save("transport")),
    Option("hide-thinking", "Hide thinking", "Hide thinking blocks in answers",
           lambda tui: ON_OFF, lambda tui: "true" if tui.view.hide_thinking else "false", _hide_thinking),
    Option("collapse-changelog", "Collapse changelog", "Show a one-line note instead of the changes after an update",
           lambda tui: ON_OFF, _flag("collapseChangelog"), _save("collapseChangelog", bool)),
    Option("cache-miss-notices", "Cache miss notices", "Show notices in the chat for prompt-cache misses",
           lambda tui: ON_OFF, _flag("showCacheMissNotices"), _save("showCacheMissNotices", bool)),
    Option("quiet-startup", "Quiet startup",
           "Leave out the start-up header (header: keep only the header, not what was loaded)",
           lambda tui: ["true", "header", "false"], _quiet_startup_value, _save_quiet_startup),
    Option("double-escape-action", "Double-escape action", "What Esc twice on an empty editor opens",
           lambda tui: ["tree", "fork", "none"], lambda tui: tui.settings.get("doubleEscapeAction") or "tree",
           _save("doubleEscapeAction")),
    Option("tree-filter-mode", "Tree filter mode", "The filter /tree opens with",
           lambda tui: ["default", "no-tools", "user-only", "labeled-only", "all"],
           lambda tui: tui.settings.get("treeFilterMode") or "default", _save("treeFilterMode")),
    Option("show-images", "Show images", "Show images in the terminal (kitty, iTerm2)",
           lambda tui: ON_OFF, _flag("terminal.showImages", True), _save("terminal.showImages", bool)),
    Option("block-images", "Block images", "Never send images to the model",
           lambda tui: ON_OFF, _flag("images.blockImages"), _save("images.blockImages", bool)),
    Option("skill-commands", "Skill commands", "Offer skills as /skill:name commands",
           lambda tui: ON_OFF, _flag("enableSkillCommands", True), _save("enableSkillCommands", bool)),
    Option("show-hardware-cursor", "Show hardware cursor", "Show the terminal's cursor instead of a drawn one",
           lambda tui: ON_OFF, _flag("showHardwareCursor"), _save("showHardwareCursor", bool)),
    Option("editor-padding", "Editor padding", "Columns of space on each side of the editor (0-3)",
           lambda tui: ["0", "1", "2", "3"], lambda tui: str(tui.settings.get("editorPaddingX", 0)),
           _save("editorPaddingX", int)),
    Option("autocomplete-max-visible", "Autocomplete max items", "Rows of the completion list (3-20)",
           lambda tui: ["3", "5", "7", "10", "15", "20"],
           lambda tui: str(tui.settings.get("autocompleteMaxVisible", 5)), _save("autocompleteMaxVisible", int)),
    Option("clear-on-shrink", "Clear on shrink", "Clear empty rows when the screen's content shrinks",
           lambda tui: ON_OFF, _flag("terminal.clearOnShrink"), _save("terminal.clearOnShrink", bool)),
    # pi 1.6's TUI mode, switched at once (:mod:`.mode_switch`)
    Option("tui-mode", "TUI mode", "Interface layout; regular mode uses the terminal's normal scrollback",
           lambda tui: ["regular", "fullscreen"], _tui_mode, _switch_tui_mode),
    Option("fullscreen-scrollbar", "Fullscreen scrollbar", "The transcript's scrollbar in fullscreen mode",
           lambda tui: ["auto", "always", "hidden"], lambda tui: str(tui.settings.get("fullscreenScrollbar", "auto")),
           _save("fullscreenScrollbar")),
    Option("fullscreen-copy-on-select", "Copy on select", "Copy what the mouse selects in fullscreen mode",
           lambda tui: ON_OFF, _flag("fullscreenCopyOnSelect", True), _save("fullscreenCopyOnSelect", bool)),
    Option("fullscreen-exit-output", "Fullscreen exit output", "What fullscreen mode leaves in the terminal on exit",
           lambda tui: ["transcript", "resume-hint"],
           lambda tui: str(tui.settings.get("fullscreenExitOutput", "transcript")), _save("fullscreenExitOutput")),
    Option("terminal-progress", "Terminal progress", "Show OSC 9;4 progress indicators in the terminal tab bar",
           lambda tui: ON_OFF, _flag("terminal.showTerminalProgress"), _save("terminal.showTerminalProgress", bool)),
    Option("anthropic-extra-usage", "Anthropic extra usage",  # pi 1.6's Warnings submenu
           "Warn when Anthropic subscription auth may use paid extra usage",
           lambda tui: ON_OFF, _flag("warnings.anthropicExtraUsage", True), _save("warnings.anthropicExtraUsage", bool)),
]

#: Options with more values than this open a list of them; the others step through theirs.
CYCLE_LIMIT = 4


async def settings_dialog(tui: ChatPort, args: str) -> None:
    selected = 0
    while True:
        width = max(len(o.label) for o in OPTIONS) + 2
        items = [Item(Text.assemble(option.label.ljust(width), (option.current(tui), "accent")), option,
                      search_text=option.description) for option in OPTIONS]
        chosen = await tui.show_dialog(ListDialog(
            tui.painter, "Settings", items, selected=selected, max_visible=12,
            hint="↑↓ navigate  enter change  esc close", detail=lambda item: item.value.description))
        if chosen is None:
            return
        selected = OPTIONS.index(chosen)
        values, current = chosen.values(tui), chosen.current(tui)
        if len(values) <= CYCLE_LIMIT:
            value = values[(values.index(current) + 1) % len(values)] if current in values else values[0]
        else:
            value = await tui.show_dialog(ListDialog(
                tui.painter, chosen.label, [Item(v, v) for v in values],
                selected=values.index(current) if current in values else 0, search=len(values) > 10))
            if value is None:
                continue
        result: Any = chosen.change(tui, value)
        if result is not None:
            await result
