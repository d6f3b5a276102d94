"""The built-in slash commands of the interactive mode (design.md §10). Each is
``async command(tui, args)``; plugins add theirs through ``register_commands``."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from pi_plugins.interactive import tree_view
from pi_plugins.interactive.dialogs import InputDialog, Item, ListDialog
from pi_plugins.interactive.keys import UnbindableKey, key_sequences
from pi_plugins.interactive.model_dialogs import model, thinking
from pi_plugins.interactive.session_info import session

if TYPE_CHECKING:
    from pi_plugins.interactive.port import ChatPort


async def compact(tui: ChatPort, args: str) -> None:
    """``/compact [instructions]``"""
    await tui.busy_with("compaction", "Compacting context... (esc to cancel)",
                        tui.harness.compact(args or None))


async def tree(tui: ChatPort, args: str, selected: str | None = None) -> None:
    """``/tree``: choose an entry; the leaf moves there (to a user message's parent,
    with its text back in the editor), optionally leaving a summary of the branch."""
    harness = tui.harness
    session = harness.session
    if tui.run_task is not None:
        tui.add_text("Wait for the agent to finish (or press esc) before moving in the tree.", "warning")
        return
    if not len(session):
        tui.add_text("No entries in session", "dim")
        return
    state = {"mode": tui.harness.ctx.settings.get("treeFilterMode", "default"), "folded": set(),
             "times": False}
    if state["mode"] not in tree_view.FILTERS:
        state["mode"] = "default"
    while True:
        dialog, leaf = _tree_dialog(tui, state, selected)
        chosen = await tui.show_dialog(dialog)
        if chosen is None:
            return
        if isinstance(chosen, tuple):  # ("label", entry id)
            selected = chosen[1]
            current = session.label(selected) or ""
            text = await tui.show_dialog(InputDialog(tui.painter, "Label", "empty clears the label", current))
            if text is not None:
                harness.ctx.set_label(selected, text.strip() or None)
            continue
        if chosen == leaf:
            tui.add_text("Already at this point", "dim")
            return
        done = await _go_to(tui, chosen)
        if done:
            return
        selected = chosen


def _tree_dialog(tui: ChatPort, state: dict, selected: str | None) -> tuple[ListDialog, str | None]:
    """The /tree dialog over the session as it is now, and the leaf it shows."""
    session = tui.harness.session
    roots = session.tree()
    leaf = session.leaf_id
    calls = tree_view.tool_calls_by_id(roots, {t.name: t for t in tui.harness.agent.tools or []})
    listed: list = []

    def items(mode: str) -> list[Item]:
        listed[:] = tree_view.rows(roots, leaf, mode, folded=state["folded"])
        by_id = {row.entry.id: row for row in listed}
        return [Item(tree_view.row_label(row, calls, can_fold=tree_view.foldable(row, by_id),
                                         label_times=state["times"]), row.entry.id,
                     search_text=tree_view.searchable(row.node, calls))
                for row in listed]

    def refresh(dialog: ListDialog, select: str | None = None) -> None:
        dialog.subtitle = _tree_subtitle(state["mode"])
        dialog.set_items(items(state["mode"]), select or (dialog.current.value if dialog.current else None))

    def set_mode(dialog: ListDialog, mode: str) -> None:
        state["mode"] = mode
        state["folded"].clear()
        refresh(dialog)

    def cycle(step: int):
        def action(dialog: ListDialog) -> None:
            modes = tree_view.FILTERS
            set_mode(dialog, modes[(modes.index(state["mode"]) + step) % len(modes)])
        return action

    def toggle(mode: str):
        return lambda dialog: set_mode(dialog, "default" if state["mode"] == mode else mode)

    def label(dialog: ListDialog) -> None:
        if dialog.current is not None:
            dialog.done(("label", dialog.current.value))

    def fold(direction: str):
        """Ctrl+←: fold this branch segment, else go to its start; Ctrl+→: unfold, else onwards."""
        def action(dialog: ListDialog) -> None:
            current = dialog.current
            if current is None or dialog.search.text:
                return
            by_id = {row.entry.id: row for row in listed}
            row = by_id.get(current.value)
            if direction == "up" and row is not None and tree_view.foldable(row, by_id) \
                    and row.entry.id not in state["folded"]:
                state["folded"].add(row.entry.id)
                refresh(dialog, row.entry.id)
            elif direction == "down" and row is not None and row.entry.id in state["folded"]:
                state["folded"].discard(row.entry.id)
                refresh(dialog, row.entry.id)
            else:
                index = next(i for i, r in enumerate(listed) if r.entry.id == current.value)
                dialog.select_value(listed[tree_view.segment_start(listed, index, direction)].entry.id)
        return action

    def timestamps(dialog: ListDialog) -> None:
        state["times"] = not state["times"]
        refresh(dialog)

    actions = {
        "app.tree.filter.cycleForward": cycle(1), "app.tree.filter.cycleBackward": cycle(-1),
        "app.tree.filter.userOnly": toggle("user-only"), "app.tree.filter.noTools": toggle("no-tools"),
        "app.tree.filter.labeledOnly": toggle("labeled-only"), "app.tree.filter.all": toggle("all"),
        "app.tree.filter.default": lambda d: set_mode(d, "default"), "app.tree.editLabel": label,
        "app.tree.toggleLabelTimestamp": timestamps,
        "app.tree.foldOrUp": fold("up"), "app.tree.unfoldOrDown": fold("down"),
    }
    keys = {"left": lambda d: d.move(-d.visible, wrap=False), "right": lambda d: d.move(d.visible, wrap=False)}
    for action_id, handler in actions.items():
        for spec in tui.keybindings.keys(action_id):
            try:
                keys.update({" ".join(seq): handler for seq in key_sequences(spec)})
            except UnbindableKey:
                continue
    kb = tui.keybindings
    dialog = ListDialog(
        tui.painter, "Session tree", items(state["mode"]), subtitle=_tree_subtitle(state["mode"]),
        search=True, max_visible=max(5, min(tui.rows // 2, 20)),
        hint=(f"↑↓ move  ←→ page  {kb.hint('app.tree.foldOrUp', True)}/{kb.hint('app.tree.unfoldOrDown', True)} "
              f"fold/branch  enter go there  {kb.hint('app.tree.editLabel')} label  "
              f"{kb.hint('app.tree.toggleLabelTimestamp')} label time  "
              f"{kb.hint('app.tree.filter.cycleForward')}/{kb.hint('app.tree.filter.cycleBackward')} filter  "
              "esc cancel"),
        keys=keys)
    dialog.select_value(selected or leaf)
    return dialog, leaf


def _tree_subtitle(mode: str) -> str:
    return f"filter: {mode} · type to search"


async def _go_to(tui: ChatPort, entry_id: str) -> bool:
    """Move to ``entry_id`` after asking about a summary; False to show the tree again."""
    harness = tui.harness
    entry = harness.session.entry(entry_id)
    editor_text = tree_view.editor_text_for(entry)
    target = entry.parent_id if editor_text is not None else entry_id
    while True:
        if harness.ctx.settings.get("branchSummary.skipPrompt", False):
            choice, instructions = "none", None  # the setting: never ask, never summarize
            break
        choice = await tui.show_dialog(ListDialog(tui.painter, "Summarize the branch you leave?", [
            Item("No summary", "none"), Item("Summarize", "summary"),
            Item("Summarize with custom prompt", "custom")]))
        if choice is None:
            return False
        instructions = None
        if choice == "custom":
            instructions = await tui.show_dialog(InputDialog(tui.painter, "Custom summarization instructions"))
            if instructions is None:
                continue
        break
    restore = await _offer_restore(tui, entry_id)
    if restore is None:
        return False
    summarize = choice != "none"
    try:
        if summarize:
            moved = await tui.busy_with("branch summary", "Summarizing branch... (esc to cancel)",
                                        harness.navigate_tree(target, summarize=True, instructions=instructions))
        else:
            moved = await harness.navigate_tree(target)
    except Exception as exc:
        if tui.busy_aborted:
            tui.add_text("Branch summarization cancelled", "dim")
        else:
            tui.add_text(f"Branch summary failed: {exc}", "error")
        return False
    if moved is None:  # the agent was busy
        return True
    if not moved:
        tui.add_text("Navigation cancelled", "dim")
        return True
    tui.start_over()
    if editor_text is not None and not tui.editor.text.strip():
        tui.set_editor_text(editor_text)
    tui.add_text("Navigated to the selected point", "dim")
    if restore:
        await _restore_files(tui, entry_id)
    return True


async def _offer_restore(tui: ChatPort, entry_id: str) -> bool | None:
    """Where checkpoints are on and the files at ``entry_id`` differ from the workspace,
    ask whether to restore them too: True, False, or None when the user backed out."""
    try:
        files = await (await tui.harness.checkpointer()).plan(entry_id)
    except Exception:  # checkpoints off, or none at or before that point
        return False
    if not files:
        return False
    shown = ", ".join(files[:4]) + (f" and {len(files) - 4} more" if len(files) > 4 else "")
    choice = await tui.show_dialog(ListDialog(tui.painter, "Restore the files to that point too?", [
        Item("Keep the files as they are", "keep"),
        Item(f"Restore {len(files)} file{'s' if len(files) != 1 else ''}", "restore")],
        subtitle=f"changed since then: {shown}"))
    return None if choice is None else choice == "restore"


async def _restore_files(tui: ChatPort, entry_id: str) -> None:
    try:
        result = await tui.harness.restore_checkpoint(entry_id)
    except Exception as exc:
        tui.add_text(f"Restoring the files failed: {exc}", "error")
        return
    count = len(result.files)
    listed = ", ".join(result.files[:5]) + (" …" if count > 5 else "")
    text = (f"Restored {count} file{'s' if count != 1 else ''}{': ' + listed if count else ''}; "
            f"/rewind {result.undo_entry_id} undoes it")
    if result.skipped:
        text += f" (left alone: {', '.join(sorted(result.skipped))})"
    tui.add_text(text, "dim")


async def rewind(tui: ChatPort, args: str) -> None:
    """``/rewind [entry id]``: put the files back as they were at one of the session's
    checkpoints (the conversation stays where it is; ``/tree`` moves it)."""
    if tui.run_task is not None:
        tui.add_text("Wait for the agent to finish (or press esc) before restoring files.", "warning")
        return
    try:
        checkpoints = await tui.harness.checkpoints()
    except LookupError as exc:
        tui.add_text(str(exc), "warning")
        return
    entry_id = args.strip()
    if not entry_id:
        if not checkpoints:
            tui.add_text("No checkpoints in this session yet", "dim")
            return
        items = [Item(c.describe(), c.entry_id, search_text=c.describe()) for c in reversed(checkpoints)]
        entry_id = await tui.show_dialog(ListDialog(
            tui.painter, "Restore the files to which checkpoint?", items, search=True,
            subtitle="the latest first; the conversation stays where it is"))
        if entry_id is None:
            return
    await _restore_files(tui, entry_id)


async def fork(tui: ChatPort, args: str) -> None:
    """``/fork``: a new session from before one of this branch's user messages."""
    points = tui.harness.fork_messages()
    if not points:
        tui.add_text("No messages to fork from", "dim")
        return
    items = [Item(" ".join(text.split())[:200], entry_id) for entry_id, text in reversed(points)]
    chosen = await tui.show_dialog(ListDialog(tui.painter, "Fork from which message?", items, search=True,
                                              subtitle="the new session ends before it; its text returns to the editor"))
    if chosen is None:
        return
    restore = await _offer_restore(tui, chosen)
    if restore is None:
        return
    before = tui.harness.session.entry(chosen).parent_id
    text, cancelled = await tui.harness.fork(chosen)
    if cancelled:
        tui.add_text("Fork cancelled by a plugin", "dim")
        return
    tui.start_over()
    tui.set_editor_text(text)
    tui.add_text("Forked to a new session", "dim")
    if restore and before is not None:
        await _restore_files(tui, before)


async def clone(tui: ChatPort, args: str) -> None:
    if not await tui.harness.clone():
        tui.add_text("Clone cancelled by a plugin", "dim")
        return
    tui.start_over()
    tui.add_text("Cloned the current branch into a new session", "dim")


async def new(tui: ChatPort, args: str) -> None:
    if not await tui.harness.new_session():
        tui.add_text("New session cancelled by a plugin", "dim")
        return
    tui.start_over()
    tui.add_text("New session started", "dim")


async def resume(tui: ChatPort, args: str) -> None:
    """``/resume``: pi's session picker (:mod:`pi_plugins.interactive.session_picker`)."""
    from pi_plugins.interactive.session_picker import SessionPicker

    chosen = await SessionPicker(tui).pick()
    if chosen is None:
        return
    from pi_plugins.interactive.missing_cwd import resume_where_gone

    said = await resume_where_gone(tui, str(chosen))  # its folder gone: pi 1.6's question
    if said == "":
        return
    if said is None and not await tui.harness.switch_session(str(chosen)):
        tui.add_text("Switch cancelled by a plugin", "dim")
        return
    tui.start_over()
    tui.add_text(said or f"Resumed {os.path.basename(chosen)}", "dim")


async def name(tui: ChatPort, args: str) -> None:
    session = tui.harness.session
    if not args:
        tui.add_text(f"Session name: {session.name}" if session.name else "Usage: /name <name>", "dim")
        return
    tui.harness.ctx.set_session_name(args)
    tui.add_text(f"Session name set: {args}", "dim")
    tui.invalidate()


def path_argument(args: str) -> str | None:
    """The path a command names, as pi reads it: a quoted path, else the first word."""
    args = args.strip()
    if not args:
        return None
    if args[0] in "\"'":
        end = args.find(args[0], 1)
        return args[1:end] if end > 0 else None
    return args.split()[0]


async def export(tui: ChatPort, args: str) -> None:
    """``/export [file]``: HTML, or the current branch as JSONL when the name ends ``.jsonl``."""
    from pi_plugins.export_html import ExportError, export_html
    from pi_plugins.export_jsonl import export_jsonl

    output = path_argument(args)
    try:
        if output is not None and output.endswith(".jsonl"):
            written = export_jsonl(tui.harness.session, output)
        else:
            written = export_html(tui.harness.session, output, tools=tui.harness.agent.tools)
    except (ExportError, OSError) as exc:
        tui.add_text(f"Failed to export session: {exc}", "error")
        return
    tui.add_text(f"Session exported to: {written}", "dim")


HOTKEYS = [
    ("tui.input.submit", "send; while the agent works: steer"),
    ("app.message.followUp", "queue a follow-up for when the agent is done"),
    ("app.interrupt", "abort (queued messages return to the editor); twice on an empty editor: /tree"),
    ("app.message.dequeue", "put queued messages back in the editor"),
    ("app.clear", "clear the editor; twice: quit"),
    ("app.exit", "quit (empty editor)"),
    ("tui.input.newLine", "new line (also ctrl+j)"),
    ("tui.input.tab", "complete a path or command"),
    ("@", "find a project file"),
    ("!cmd / !!cmd", "run a shell command (!! keeps it out of the context)"),
    ("tui.editor.cursorUp", "previous prompts"),
    ("app.model.select", "choose a model"),
    ("app.model.cycleForward", "next model"),
    ("app.model.cycleBackward", "previous model"),
    ("app.thinking.cycle", "next thinking level"),
    ("app.tools.expand", "expand or collapse tool output"),
    ("app.thinking.toggle", "show or hide thinking"),
    ("app.clipboard.pasteImage", "paste an image from the clipboard"),
    ("app.message.copy", "copy the last answer"),
    ("app.editor.external", "edit in externalEditor / $VISUAL / $EDITOR"),
    ("app.suspend", "suspend"),
]


async def hotkeys(tui: ChatPort, args: str) -> None:
    """``/hotkeys``: the keys as keybindings.json set them."""
    from pi_plugins.interactive.fullscreen_layout import FULLSCREEN_HOTKEYS

    shown = HOTKEYS + (FULLSCREEN_HOTKEYS if getattr(tui, "fullscreen", False) else [])
    rows = [(tui.keybindings.hint(key) if "." in key and " " not in key else key, what) for key, what in shown]
    rows += [(shortcut.key, shortcut.description) for shortcut in tui.shortcuts]
    width = max(len(k) for k, _ in rows)
    lines = [f"{key.ljust(width)}  {what}" for key, what in rows]
    tui.add_text("Keyboard shortcuts\n" + "\n".join(lines), "none")


async def reload_(tui: ChatPort, args: str) -> None:
    await tui.harness.reload()
    from pi_plugins.interactive.appearance import reload_themes

    reload_themes(tui)
    await tui.load_plugin_parts()
    tui.reload_keybindings()
    registry = tui.harness.model_registry  # models.json as it is now, as pi 1.6's /reload
    if registry is not None:
        registry.refresh()
        for problem in registry.errors:
            tui.add_text(f"models.json error: {problem}" if problem.startswith("models.json") else problem, "error")
    tui.add_text("Reloaded plugins, skills, prompt templates, context files and keybindings.", "dim")
    if tui.resource_problems:
        from pi_plugins.interactive.blocks import ProblemsBlock

        tui.add(ProblemsBlock(tui.resource_problems))


def last_answer(tui: ChatPort) -> str | None:
    """The text of the newest assistant message that has some."""
    for message in reversed(tui.harness.messages):
        if getattr(message, "role", None) == "assistant":
            text = "".join(getattr(c, "text", "") for c in message.content if getattr(c, "type", None) == "text")
            if text.strip():
                return text
    return None


async def copy(tui: ChatPort, args: str) -> None:
    """``/copy``: the last answer to the system clipboard and, as OSC 52, the terminal's."""
    from pi_plugins.interactive.clipboard import copy_to_clipboard

    text = last_answer(tui)
    if text is None:
        tui.add_text("No agent messages to copy yet.", "error")
        return
    tool, sent = await copy_to_clipboard(text, tui.write_to_terminal)
    if tool is None and not sent:
        tui.add_text("Could not copy: no clipboard tool, and the text is too long for OSC 52", "error")
        return
    tui.add_text("Copied last agent message to clipboard", "dim")


async def _bug(tui: ChatPort, args: str) -> None:
    from pi_plugins.interactive.bug_report import bug

    await bug(tui, args)


async def _debug(tui: ChatPort, args: str) -> None:
    from pi_plugins.interactive.debug_log import debug

    await debug(tui, args)


async def _share(tui: ChatPort, args: str) -> None:
    from pi_plugins.interactive.share import share

    await share(tui, args)


async def changelog(tui: ChatPort, args: str) -> None:
    """``/changelog``: every released version's changes, oldest first (as pi)."""
    from pi_plugins.interactive.blocks import NoticeBlock
    from pi_plugins.interactive.changelog import read_changelog

    entries = read_changelog()
    text = "\n\n".join(e.content for e in reversed(entries)) if entries else "No changelog entries found."
    tui.add(NoticeBlock("What's New", text))


async def import_(tui: ChatPort, args: str) -> None:
    """``/import FILE``: a session file copied into this project's sessions and resumed."""
    import shutil
    from pathlib import Path

    from pi_core.session.locations import session_dir_for

    path = args.strip().strip("\"'")
    if not path:
        tui.add_text("Usage: /import <path.jsonl>", "error")
        return
    source = Path(path).expanduser()
    if not source.is_absolute():
        source = Path(tui.harness.ctx.cwd) / source
    if not source.is_file():
        tui.add_text(f"Failed to import session: no such file {source}", "error")
        return
    if not await tui.ui.confirm("Import session", f"Replace current session with {path}?"):
        tui.add_text("Import cancelled", "dim")
        return
    harness = tui.harness
    folder = Path(harness.session.sessions_dir or session_dir_for(harness.ctx.cwd))
    folder.mkdir(parents=True, exist_ok=True)
    destination = folder / source.name
    if destination.resolve() != source.resolve():
        if destination.exists():
            tui.add_text(f"Failed to import session: {destination} already exists", "error")
            return
        shutil.copyfile(source, destination)
    if not await harness.switch_session(str(destination)):
        tui.add_text("Import cancelled", "dim")
        return
    tui.start_over()
    tui.add_text(f"Session imported from: {path}", "dim")


async def _scoped_models(tui: ChatPort, args: str) -> None:
    from pi_plugins.interactive.scoped_models import scoped_models

    await scoped_models(tui, args)


async def _settings(tui: ChatPort, args: str) -> None:
    from pi_plugins.interactive.settings_dialog import settings_dialog

    await settings_dialog(tui, args)


async def trust(tui: ChatPort, args: str) -> None:
    from pi_plugins.interactive.dialogs import Item, ListDialog
    from pi_plugins.trust import trust_command

    async def ask(title: str, labels: list[str], selected: int) -> str | None:  # on the saved answer, as 1.6
        items = [Item(label, label) for label in labels]
        return await tui.show_dialog(ListDialog(tui.painter, title, items, selected=selected,
                                                hint="↑↓ navigate  enter save  esc cancel"))

    await trust_command(args, tui.harness.ctx, ask)


async def login(tui: ChatPort, args: str) -> None:
    from pi_plugins.signin.chat import login as sign_in

    await sign_in(args, tui.harness.ctx)


async def logout(tui: ChatPort, args: str) -> None:
    from pi_plugins.signin.chat import logout as sign_out

    await sign_out(args, tui.harness.ctx)


async def quit_(tui: ChatPort, args: str) -> None:
    tui.exit()


BUILTINS = [
    ("model", "Choose the model", model),
    ("thinking", "Set the thinking level [level]", thinking),
    ("scoped-models", "Choose the models Ctrl+P cycles through", _scoped_models),
    ("compact", "Summarize older messages to free context [instructions]", compact),
    ("tree", "Move to any point of the session tree", tree),
    ("fork", "New session from an earlier user message", fork),
    ("rewind", "Restore the files to a checkpoint of this session [entry id]", rewind),
    ("clone", "Copy the current branch into a new session", clone),
    ("new", "Start a new session", new),
    ("resume", "Resume a session (this project or all)", resume),
    ("name", "Name this session <name>", name),
    ("session", "Session file, id, messages, tokens and cost", session),
    ("export", "Export the session as HTML or JSONL [path]", export),
    ("import", "Import and resume a session from a JSONL file <path>", import_),
    ("changelog", "Show the changelog", changelog),
    ("share", "Share the session as a secret GitHub gist", _share),
    ("copy", "Copy the last agent message to the clipboard", copy),
    ("settings", "Change settings (saved to settings.json at once)", _settings),
    ("hotkeys", "Keyboard shortcuts", hotkeys),
    ("reload", "Reload plugins, skills, prompt templates and context files", reload_),
    ("bug", "Write a bug report for the developers (a zip here) [description]", _bug),
    ("trust", "Save a project trust decision for future pi processes", trust),
    ("login", "Sign in with a subscription or store an API key [provider]", login),
    ("logout", "Remove a sign-in or stored API key [provider]", logout),
    ("quit", "Quit", quit_),
]
COMMANDS = {name: command for name, _, command in BUILTINS}
COMMANDS["debug"] = _debug  # unlisted, as pi 1.6's /debug
