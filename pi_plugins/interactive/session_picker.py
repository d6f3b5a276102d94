"""``/resume``: pi's session picker. This project's sessions or every project's (Tab),
sorted threaded (a fork under the session it came from), by most recent or by how well
they match what is typed (``app.session.toggleSort``; the search is pi's: fuzzy words,
``"exact phrases"``, ``re:`` regular expressions), all or only named ones
(``app.session.toggleNamedFilter``), with the folder shown or not
(``app.session.togglePath``); rename (``app.session.rename``) and delete after a
confirmation (``app.session.delete``, or ``app.session.deleteNoninvasive`` while nothing
is typed). The keys are the ids' in keybindings.json."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text

from pi_plugins.interactive.dialogs import InputDialog, Item, ListDialog
from pi_plugins.interactive.keys import UnbindableKey, key_sequences
from pi_plugins.interactive.session_search import search

if TYPE_CHECKING:
    from pi_plugins.interactive.port import ChatPort

SORTS = ["threaded", "recent", "fuzzy"]
SORT_LABELS = {"threaded": "Threaded", "recent": "Recent", "fuzzy": "Fuzzy"}


def _age(when: datetime) -> str:
    seconds = (datetime.now(UTC) - when).total_seconds()
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"


def _title(info) -> str:
    return info.name or " ".join(info.first_message.split())[:120]


def _threaded(sessions: list) -> list[tuple[Any, int]]:
    """Each session after the one it was forked from (``parentSession``), newest first."""
    by_path = {str(s.path): s for s in sessions}
    children: dict[str, list] = {}
    roots = []
    for info in sessions:
        parent = info.parent_session
        if parent and parent in by_path and parent != str(info.path):
            children.setdefault(parent, []).append(info)
        else:
            roots.append(info)
    ordered: list[tuple[Any, int]] = []

    def walk(info, depth: int) -> None:
        ordered.append((info, depth))
        for child in children.get(str(info.path), []):
            walk(child, depth + 1)

    for root in roots:
        walk(root, 0)
    return ordered


def _delete_file(path: Path) -> None:
    """Into the trash when a ``trash`` command is there (as pi), else removed."""
    if shutil.which("trash"):
        if subprocess.run(["trash", str(path)], capture_output=True, timeout=10).returncode == 0:
            return
    path.unlink()


class SessionPicker:
    def __init__(self, tui: ChatPort) -> None:
        from pi_core.session.locations import session_dir_for, sessions_root

        self.tui = tui
        harness = tui.harness
        self.folder = Path(harness.session.sessions_dir or session_dir_for(harness.ctx.cwd))
        self.root = sessions_root() if not harness.session.sessions_dir else self.folder.parent
        self.current = harness.session.file
        self.scope = "current"
        self.sort = "threaded"
        self.named_only = False
        self.show_path = False
        self.query = ""
        self.selected_path: Path | None = None
        self.status: str | None = None

    # ------------------------------------------------------------ what is listed

    def sessions(self) -> list:
        from pi_plugins.session_listing.listing import list_all_sessions, list_sessions

        found = list_sessions(self.folder) if self.scope == "current" else list_all_sessions(self.root)
        found = [s for s in found if self.current is None or Path(s.path) != Path(self.current)]
        if self.named_only:
            found = [s for s in found if s.name]
        return found

    def items(self, query: str = "") -> list[Item]:
        """Every session, threaded while nothing is typed in that order, else flat (most
        recent first; :meth:`matching` narrows and sorts them by what is typed)."""
        sessions = self.sessions()
        if self.sort == "threaded" and not query.strip():
            rows = _threaded(sessions)
        else:
            rows = [(s, 0) for s in sessions]
        items = []
        for info, depth in rows:
            label = Text(("   " * (depth - 1) + "└─ ") if depth else "", style="muted")
            label.append(_title(info), style="bold" if info.name else "")
            description = f"{info.message_count} messages · {_age(info.modified)}"
            if self.show_path or self.scope == "all":
                description += f" · {info.cwd}"
            items.append(Item(label, info.path, description=description,
                              search_text=f"{info.id} {info.name or ''} {info.first_message} {info.cwd}"))
        return items

    def matching(self, query: str, items: list[Item]) -> list[Item]:
        """pi's search (:mod:`session_search`): best match first, except in Recent order."""
        return search(items, query, lambda item: item.search_text, by_relevance=self.sort != "recent")

    def heading(self) -> str:
        scope = "◉ Current Folder | ○ All" if self.scope == "current" else "○ Current Folder | ◉ All"
        return (f"{scope}  Name: {'Named' if self.named_only else 'All'}  Sort: {SORT_LABELS[self.sort]}")

    def hint(self) -> str:
        if self.status:
            return self.status
        keys = self.tui.keybindings
        return (f"tab scope · re:<pattern> regex · \"phrase\" exact · {keys.hint('app.session.toggleSort')} sort · "
                f"{keys.hint('app.session.toggleNamedFilter')} named · {keys.hint('app.session.delete')} delete · "
                f"{keys.hint('app.session.togglePath')} path ({'on' if self.show_path else 'off'}) · "
                f"{keys.hint('app.session.rename')} rename · enter open · esc cancel")

    # ------------------------------------------------------------ the dialog

    def _refresh(self, dialog: ListDialog) -> None:
        dialog.title = f"Resume Session ({'Current Folder' if self.scope == 'current' else 'All'})"
        dialog.subtitle = self.heading()
        dialog.hint = self.hint()
        keep = dialog.current.value if dialog.current else None
        dialog.set_items(self.items(dialog.search.text), select_value=keep)

    def _reorderer(self, dialog: ListDialog) -> Callable[[object], None]:
        """The search field's handler: reorder ``dialog`` as the query changes."""
        return lambda _: self._reorder(dialog)

    def _reorder(self, dialog: ListDialog) -> None:
        """Fuzzy and threaded order depend on what is typed."""
        if self.sort != "recent":
            keep = dialog.current.value if dialog.current else None
            dialog.set_items(self.items(dialog.search.text), select_value=keep)

    def _toggle(self, change):
        def action(dialog: ListDialog) -> None:
            change()
            self.status = None
            self._refresh(dialog)
        return action

    def _finish_with(self, what: str):
        def action(dialog: ListDialog) -> None:
            if dialog.current is not None:
                self.query = dialog.search.text
                dialog.done((what, dialog.current.value))
        return action

    def _delete_unless_typing(self, dialog: ListDialog) -> None:
        if dialog.search.text:
            dialog.search.delete_before_cursor()
        else:
            self._finish_with("delete")(dialog)

    def _keys(self) -> dict:
        actions = {
            "app.session.toggleSort": self._toggle(lambda: setattr(self, "sort", SORTS[(SORTS.index(self.sort) + 1)
                                                                                       % len(SORTS)])),
            "app.session.toggleNamedFilter": self._toggle(lambda: setattr(self, "named_only", not self.named_only)),
            "app.session.togglePath": self._toggle(lambda: setattr(self, "show_path", not self.show_path)),
            "app.session.rename": self._finish_with("rename"),
            "app.session.delete": self._finish_with("delete"),
            "app.session.deleteNoninvasive": self._delete_unless_typing,
        }
        keys = {"tab": self._toggle(lambda: setattr(self, "scope", "all" if self.scope == "current" else "current"))}
        for action, handler in actions.items():
            for spec in self.tui.keybindings.keys(action):
                try:
                    for sequence in key_sequences(spec):
                        keys[" ".join(sequence)] = handler
                except UnbindableKey:
                    continue
        return keys

    async def pick(self) -> Path | None:
        """The session chosen to open, after any renames and deletions on the way."""
        tui = self.tui
        while True:
            items = self.items(self.query)
            selected = next((i for i, item in enumerate(items) if item.value == self.selected_path), 0)
            dialog = ListDialog(tui.painter, "", items, search=True, query=self.query, selected=selected,
                                keys=self._keys(), max_visible=10, matcher=self.matching)
            self._refresh(dialog)
            dialog.search.on_text_changed += self._reorderer(dialog)
            if self.selected_path is not None:
                dialog.select_value(self.selected_path)
            answer = await tui.show_dialog(dialog)
            self.status = None
            if answer is None:
                return None
            if not isinstance(answer, tuple):
                return Path(answer)
            what, path = answer
            path = Path(path)
            self.selected_path = path
            if what == "rename":
                await self._rename(path)
            elif what == "delete":
                await self._delete(path)

    async def _rename(self, path: Path) -> None:
        from pi_core.session.session import Session
        from pi_plugins.session_listing.listing import read_session_info

        info = read_session_info(path)
        name = await self.tui.show_dialog(InputDialog(self.tui.painter, "Rename session",
                                                      text=(info.name if info else "") or ""))
        if name is None or not name.strip():
            return
        try:
            session = Session.open(path)
            try:
                session.append_session_info(name)
            finally:
                session.close()
        except Exception as exc:
            self.status = f"Rename failed: {exc}"
            return
        self.status = f"Renamed to {name.strip()}"

    async def _delete(self, path: Path) -> None:
        from pi_plugins.session_listing.listing import read_session_info

        info = read_session_info(path)
        title = _title(info) if info else path.name
        if not await self.tui.ui.confirm("Delete session?", f"{title}\n{path}"):
            return
        try:
            _delete_file(path)
        except OSError as exc:
            self.status = f"Delete failed: {exc}"
            return
        self.selected_path = None
        self.status = f"Deleted {os.path.basename(path)}"
