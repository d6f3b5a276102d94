"""The built-in slash commands of the interactive mode (design.md §10). Each is
``async command(tui, args)``; plugins add theirs through ``register_commands``."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from rich.text import Text

from pi_plugins.interactive.dialogs import InputDialog, Item, ListDialog
from pi_plugins.interactive.footer import format_tokens
from pi_plugins.interactive import tree_view

if TYPE_CHECKING:
    from pi_plugins.interactive.app import InteractiveApp


async def model(tui: "InteractiveApp", args: str) -> None:
    """``/model [search]``: an exact match switches at once, else the selector opens."""
    harness = tui.harness
    models = harness.available_models()
    if args:
        exact = [m for m in models if args in (m.key, m.id, f"{m.provider}/{m.id}")]
        if len(exact) == 1:
            await _switch_model(tui, exact[0])
            return
    current = harness.model.key
    items = [Item(Text.assemble(m.id, (f" [{m.provider}]", "muted"), (" ✓" if m.key == current else "", "success")),
                  m, search_text=f"{m.provider}/{m.id} {m.name}") for m in models]
    if not items:
        tui.add_text("No models available: add one to models.json or set an API key", "warning")
        return
    selected = next((i for i, m in enumerate(models) if m.key == current), 0)
    chosen = await tui.show_dialog(ListDialog(
        tui.painter, "Select a model", items, search=True, query=args, selected=selected,
        detail=lambda item: f"Model name: {item.value.name or item.value.id}"))
    if chosen is not None:
        await _switch_model(tui, chosen)


async def _switch_model(tui: "InteractiveApp", chosen) -> None:
    await tui.harness.set_model(chosen)
    tui.add_text(f"Model: {chosen.provider}/{chosen.id}", "dim")


async def compact(tui: "InteractiveApp", args: str) -> None:
    """``/compact [instructions]``"""
    await tui.busy_with("compaction", "Compacting context... (esc to cancel)",
                        tui.harness.compact(args or None))


async def tree(tui: "InteractiveApp", args: str, selected: str | None = None) -> None:
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
    state = {"mode": tui.harness.ctx.settings.get("treeFilterMode", "default")}
    if state["mode"] not in tree_view.FILTERS:
        state["mode"] = "default"
    while True:
        roots = session.tree()
        leaf = session.leaf_id
        calls = tree_view.tool_calls_by_id(roots, {t.name: t for t in tui.harness.agent.tools or []})

        def items(mode: str) -> list[Item]:
            return [Item(tree_view.row_label(row, calls), row.entry.id,
                         search_text=tree_view.searchable(row.node, calls))
                    for row in tree_view.rows(roots, leaf, mode)]

        def set_mode(dialog: ListDialog, mode: str) -> None:
            state["mode"] = mode
            dialog.subtitle = _tree_subtitle(mode)
            dialog.set_items(items(mode), dialog.current.value if dialog.current else None)

        def cycle(dialog: ListDialog) -> None:
            modes = tree_view.FILTERS
            set_mode(dialog, modes[(modes.index(state["mode"]) + 1) % len(modes)])

        def toggle(mode: str):
            return lambda dialog: set_mode(dialog, "default" if state["mode"] == mode else mode)

        def label(dialog: ListDialog) -> None:
            if dialog.current is not None:
                dialog.done(("label", dialog.current.value))

        dialog = ListDialog(
            tui.painter, "Session tree", items(state["mode"]), subtitle=_tree_subtitle(state["mode"]),
            search=True, max_visible=max(5, min(tui.rows // 2, 20)),
            hint="↑↓ move  ←→ page  enter go there  shift+l label  ctrl+o filter  esc cancel",
            keys={"c-o": cycle, "c-u": toggle("user-only"), "c-t": toggle("no-tools"),
                  "c-l": toggle("labeled-only"), "c-a": toggle("all"), "c-d": toggle("default"),
                  "L": label, "left": lambda d: d.move(-d.visible, wrap=False),
                  "right": lambda d: d.move(d.visible, wrap=False)})
        dialog.select_value(selected or leaf)
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


def _tree_subtitle(mode: str) -> str:
    return f"filter: {mode} · type to search"


async def _go_to(tui: "InteractiveApp", entry_id: str) -> bool:
    """Move to ``entry_id`` after asking about a summary; False to show the tree again."""
    harness = tui.harness
    entry = harness.session.entry(entry_id)
    editor_text = tree_view.editor_text_for(entry)
    target = entry.parent_id if editor_text is not None else entry_id
    while True:
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


async def _offer_restore(tui: "InteractiveApp", entry_id: str) -> bool | None:
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


async def _restore_files(tui: "InteractiveApp", entry_id: str) -> None:
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


async def rewind(tui: "InteractiveApp", args: str) -> None:
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


async def fork(tui: "InteractiveApp", args: str) -> None:
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


async def clone(tui: "InteractiveApp", args: str) -> None:
    if not await tui.harness.clone():
        tui.add_text("Clone cancelled by a plugin", "dim")
        return
    tui.start_over()
    tui.add_text("Cloned the current branch into a new session", "dim")


async def new(tui: "InteractiveApp", args: str) -> None:
    if not await tui.harness.new_session():
        tui.add_text("New session cancelled by a plugin", "dim")
        return
    tui.start_over()
    tui.add_text("New session started", "dim")


def _age(when: datetime) -> str:
    seconds = (datetime.now(timezone.utc) - when).total_seconds()
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"


async def resume(tui: "InteractiveApp", args: str) -> None:
    """``/resume``: pick another session of this project."""
    from pi_core.app.listing import list_sessions
    from pi_core.session.locations import session_dir_for

    harness = tui.harness
    folder = harness.session.sessions_dir or session_dir_for(harness.ctx.cwd)
    current = harness.session.file
    sessions = [s for s in list_sessions(folder) if current is None or s.path != current]
    if not sessions:
        tui.add_text("No other sessions in this project", "dim")
        return
    items = [Item(s.name or " ".join(s.first_message.split())[:120], s.path,
                  description=f"{s.message_count} messages · {_age(s.modified)}") for s in sessions]
    chosen = await tui.show_dialog(ListDialog(tui.painter, "Resume a session", items, search=True))
    if chosen is None:
        return
    if not await harness.switch_session(str(chosen)):
        tui.add_text("Switch cancelled by a plugin", "dim")
        return
    tui.start_over()
    tui.add_text(f"Resumed {os.path.basename(chosen)}", "dim")


async def name(tui: "InteractiveApp", args: str) -> None:
    session = tui.harness.session
    if not args:
        tui.add_text(f"Session name: {session.name}" if session.name else "Usage: /name <name>", "dim")
        return
    tui.harness.ctx.set_session_name(args)
    tui.add_text(f"Session name set: {args}", "dim")
    tui.invalidate()


async def session(tui: "InteractiveApp", args: str) -> None:
    stats = tui.harness.stats()
    tokens = stats["tokens"]
    lines = [
        f"Session: {tui.harness.session.name or '(unnamed)'}",
        f"File: {stats['sessionFile'] or '(not saved)'}",
        f"ID: {stats['sessionId']}",
        f"Messages: {stats['userMessages']} user, {stats['assistantMessages']} assistant, "
        f"{stats['toolCalls']} tool calls, {stats['toolResults']} tool results",
        f"Tokens: {format_tokens(tokens['input'])} in, {format_tokens(tokens['output'])} out, "
        f"{format_tokens(tokens['cacheRead'])} cache read, {format_tokens(tokens['cacheWrite'])} cache write",
        f"Cost: ${stats['cost']:.4f}",
    ]
    tui.add_text("\n".join(lines), "none")


async def export(tui: "InteractiveApp", args: str) -> None:
    from pi_plugins.export_html import ExportError, export_html

    try:
        written = export_html(tui.harness.session, args or None, tools=tui.harness.agent.tools)
    except (ExportError, OSError) as exc:
        tui.add_text(f"Export failed: {exc}", "error")
        return
    tui.add_text(f"Exported to: {written}", "dim")


HOTKEYS = [
    ("enter", "send; while the agent works: steer"),
    ("alt+enter", "queue a follow-up for when the agent is done"),
    ("escape", "abort (queued messages return to the editor); twice on an empty editor: /tree"),
    ("alt+up", "put queued messages back in the editor"),
    ("ctrl+c", "clear the editor; twice: quit"),
    ("ctrl+d", "quit (empty editor)"),
    ("ctrl+j, shift+enter", "new line"),
    ("tab", "complete a path or command"),
    ("@", "find a project file"),
    ("!cmd / !!cmd", "run a shell command (!! keeps it out of the context)"),
    ("up / down", "previous prompts"),
    ("ctrl+l", "choose a model"),
    ("ctrl+p", "next model"),
    ("shift+tab", "next thinking level"),
    ("ctrl+o", "expand or collapse tool output"),
    ("ctrl+t", "show or hide thinking"),
    ("ctrl+g", "edit in $VISUAL / $EDITOR"),
    ("ctrl+z", "suspend"),
]


async def hotkeys(tui: "InteractiveApp", args: str) -> None:
    width = max(len(k) for k, _ in HOTKEYS)
    lines = [f"{key.ljust(width)}  {what}" for key, what in HOTKEYS]
    for shortcut in tui.shortcuts:
        lines.append(f"{shortcut.key.ljust(width)}  {shortcut.description}")
    tui.add_text("Keyboard shortcuts\n" + "\n".join(lines), "none")


async def reload_(tui: "InteractiveApp", args: str) -> None:
    await tui.harness.reload()
    await tui._load_plugin_parts()
    tui.add_text("Reloaded plugins, skills, prompt templates and context files.", "dim")


async def trust(tui: "InteractiveApp", args: str) -> None:
    from pi_plugins.trust import trust_command

    await trust_command(args, tui.harness.ctx)


async def quit_(tui: "InteractiveApp", args: str) -> None:
    tui.exit()


BUILTINS = [
    ("model", "Choose the model", model),
    ("compact", "Summarize older messages to free context [instructions]", compact),
    ("tree", "Move to any point of the session tree", tree),
    ("fork", "New session from an earlier user message", fork),
    ("rewind", "Restore the files to a checkpoint of this session [entry id]", rewind),
    ("clone", "Copy the current branch into a new session", clone),
    ("new", "Start a new session", new),
    ("resume", "Resume another session of this project", resume),
    ("name", "Name this session <name>", name),
    ("session", "Session file, id, messages, tokens and cost", session),
    ("export", "Export the session to HTML [file]", export),
    ("hotkeys", "Keyboard shortcuts", hotkeys),
    ("reload", "Reload plugins, skills, prompt templates and context files", reload_),
    ("trust", "Save a project trust decision for future pi processes", trust),
    ("quit", "Quit", quit_),
]
COMMANDS = {name: command for name, _, command in BUILTINS}
