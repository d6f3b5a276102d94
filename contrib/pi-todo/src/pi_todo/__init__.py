"""pi-todo: a ``todo`` tool for the model and a ``/todos`` command for the user.

The list lives in the session: every change appends a ``custom`` entry (custom type
``pi-todo``) holding the whole list. The list in force is the one in the last such entry
on the path from the root to the current leaf, so it follows the branch you are on:
after ``/tree`` moves back to an earlier point, the list is the one from that point;
resuming a session brings its list back. It is rebuilt at ``session_start`` and after
``session_tree``; custom entries never reach the model.
"""

from __future__ import annotations

import weakref
from typing import Any

from attrs import asdict, define, field

from pi_core import Command, hookimpl

# pi_core.protocol.tools (and the loop behind it) is imported on first use: loading this plugin at
# start-up stays nearly free.

CUSTOM_TYPE = "pi-todo"
ACTIONS = ("list", "add", "complete", "reopen", "remove", "clear")

PARAMETERS = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": list(ACTIONS),
                   "description": "list, add (text), complete/reopen/remove (id), clear (everything)"},
        "text": {"type": "string", "description": "The item's text (add)"},
        "id": {"type": "integer", "description": "The item's number (complete, reopen, remove)"},
    },
    "required": ["action"],
    "additionalProperties": False,
}

DESCRIPTION = (
    "Keep a todo list for the work at hand. Actions: list; add (text); complete, reopen or "
    "remove (id); clear (removes every item). Returns the list after the change."
)


@define
class Item:
    id: int
    text: str
    done: bool = False


@define
class TodoList:
    items: list[Item] = field(factory=list)
    next_id: int = 1

    def to_data(self) -> dict:
        return {"todos": [asdict(i) for i in self.items], "nextId": self.next_id}

    @classmethod
    def from_data(cls, data: Any) -> TodoList:
        """A list from an entry's data; anything malformed is skipped, never fatal."""
        if not isinstance(data, dict):
            return cls()
        items = []
        for raw in data.get("todos") or []:
            if isinstance(raw, dict) and isinstance(raw.get("id"), int) and isinstance(raw.get("text"), str):
                items.append(Item(raw["id"], raw["text"], bool(raw.get("done"))))
        next_id = data.get("nextId")
        if not isinstance(next_id, int):
            next_id = max((i.id for i in items), default=0) + 1
        return cls(items, next_id)

    def find(self, item_id: int | None) -> Item | None:
        return next((i for i in self.items if i.id == item_id), None)

    def render(self) -> str:
        if not self.items:
            return "No todos."
        done = sum(i.done for i in self.items)
        lines = [f"{done}/{len(self.items)} done"]
        lines += [f"[{'x' if i.done else ' '}] #{i.id} {i.text}" for i in self.items]
        return "\n".join(lines)


# One list per harness (its ctx); a plugin module may serve several harnesses at once.
_lists: weakref.WeakKeyDictionary[Any, TodoList] = weakref.WeakKeyDictionary()


def list_from_path(entries) -> TodoList:
    """The list in force at the end of ``entries`` (a branch, root first)."""
    for entry in reversed(entries):
        if getattr(entry, "type", None) == "custom" and entry.custom_type == CUSTOM_TYPE:
            return TodoList.from_data(entry.data)
    return TodoList()


def rebuild(ctx) -> TodoList:
    session = getattr(ctx, "session", None)
    todos = list_from_path(session.path()) if session is not None else TodoList()
    _lists[ctx] = todos
    return todos


def current(ctx) -> TodoList:
    todos = _lists.get(ctx)
    return todos if todos is not None else rebuild(ctx)


def save(ctx, todos: TodoList) -> None:
    """Make ``todos`` the list in force and record it in the session."""
    _lists[ctx] = todos
    if getattr(ctx, "session", None) is not None:
        ctx.append_entry(CUSTOM_TYPE, todos.to_data())


def apply(todos: TodoList, action: str, text: str | None, item_id: int | None) -> tuple[TodoList | None, str]:
    """(the changed list or None when nothing changed, a message); raises ValueError
    for a request that cannot be carried out."""
    if action == "list":
        return None, todos.render()
    if action == "add":
        if not text or not text.strip():
            raise ValueError("add needs a non-empty text")
        item = Item(todos.next_id, text.strip())
        return TodoList([*todos.items, item], todos.next_id + 1), f"Added #{item.id}."
    if action == "clear":
        return TodoList([], todos.next_id), "Cleared the list."
    if item_id is None:
        raise ValueError(f"{action} needs the id of an item")
    found = todos.find(item_id)
    if found is None:
        known = ", ".join(f"#{i.id}" for i in todos.items) or "none"
        raise ValueError(f"there is no item #{item_id} (items: {known})")
    if action == "remove":
        kept = [i for i in todos.items if i.id != item_id]
        return TodoList(kept, todos.next_id), f"Removed #{item_id}."
    done = action == "complete"
    changed = [Item(i.id, i.text, done) if i.id == item_id else Item(i.id, i.text, i.done) for i in todos.items]
    return TodoList(changed, todos.next_id), f"{'Completed' if done else 'Reopened'} #{item_id}."


async def _run_todo(args: dict, run):
    from pi_core import ToolResult

    ctx = run.ctx
    todos = current(ctx)
    try:
        changed, message = apply(todos, args["action"], args.get("text"), args.get("id"))
    except ValueError as exc:
        return ToolResult.error(f"todo: {exc}. The list is unchanged:\n{todos.render()}")
    if changed is None:
        return ToolResult.text(message, todos.to_data())
    save(ctx, changed)
    return ToolResult.text(f"{message}\n{changed.render()}", changed.to_data())


def todo_tool():
    from pi_core import Tool

    return Tool(name="todo", label="Todo", description=DESCRIPTION, parameters=PARAMETERS, function=_run_todo)


async def _todos_command(args: str, ctx) -> str:
    """``/todos`` shows the list; ``/todos clear`` empties it."""
    words = args.split()
    if words[:1] == ["clear"]:
        save(ctx, TodoList([], current(ctx).next_id))
        text = "Todo list cleared."
    elif words:
        text = "Usage: /todos [clear]"
    else:
        text = current(ctx).render()
    ctx.ui.notify(text, "info")
    return text


@hookimpl
def register_tools(ctx):
    return [todo_tool()]


@hookimpl
def register_commands(ctx):
    return [Command(name="todos", description="Show the todo list (/todos clear empties it)",
                    handler=_todos_command, argument_hint="[clear]")]


@hookimpl
def session_start(event, ctx):
    rebuild(ctx)


@hookimpl
def session_tree(event, ctx):
    rebuild(ctx)
