"""``ctx``: what every hook and tool gets to reach the running harness. A todo tool
keeps its state in the session, talks to other plugins over the event bus, asks the
user through ctx.ui, runs a command and queues a follow-up.

Run it: python docs/examples/ctx_api.py
(The scripted provider stands in for a model, so this runs offline.)
"""

import asyncio
import tempfile

from pi_core import NullUI, create_harness, hookimpl, tool
from pi_core.testing import Reply, ScriptedProvider, scripted_model


class AlwaysYes(NullUI):
    """A UI that says yes (pi's interactive UI shows a dialog; print mode says no)."""

    has_ui = True

    async def confirm(self, title, message=""):
        print(f"ui.confirm: {title}")
        return True


@tool(parameters={"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]})
async def todo(args, run):
    """Add an item to the todo list."""
    ctx = run.ctx
    if not await ctx.ui.confirm(f"Add {args['item']!r}?"):
        return "The user said no."
    ctx.append_entry("todo", {"item": args["item"]})  # state in the session, never sent
    await ctx.events.emit("todo:added", args["item"])  # for other plugins
    items = [e.data["item"] for e in ctx.session.path() if e.type == "custom" and e.custom_type == "todo"]
    ctx.send_user_message("Remind me about bread, too.", deliver_as="follow_up")  # or "steer"
    return f"Todo list: {', '.join(items)}"


class TodoPlugin:
    @hookimpl
    def register_tools(self):
        return [todo]

    @hookimpl
    def session_start(self, event, ctx):
        ctx.events.on("todo:added", lambda item: print(f"event bus: todo:added {item}"))
        print(f"session_start: cwd is a folder: {bool(ctx.cwd)}, model {ctx.model.key}, "
              f"idle {ctx.is_idle()}, reserve {ctx.settings.get('compaction.reserveTokens')}")

    @hookimpl
    async def agent_end(self, event, ctx):
        done = await ctx.exec(["echo", "checked"])  # the bash tool's runner; all of it killed on timeout
        print(f"exec: {done.stdout.strip()} (exit {done.code})")
        ctx.set_session_name("Groceries")


async def main(cwd: str) -> None:
    provider = ScriptedProvider([
        Reply(tool_calls=[("todo", {"item": "milk"})]),
        Reply(text="Added milk."),
        Reply(text="I will remind you about bread."),
    ])
    harness = await create_harness(provider, TodoPlugin(), model=scripted_model(), ui=AlwaysYes(), cwd=cwd)
    ctx = harness.ctx
    print("active tools:", ctx.get_active_tools())
    await harness.prompt("Remember milk.")
    print("session name:", harness.session.name, "| id is set:", bool(ctx.session_id))
    print("conversation:", [m.role for m in harness.messages])
    print("last answer:", harness.messages[-1].text)
    ctx.set_active_tools([])  # the model is offered no tools from now on
    print("active tools:", ctx.get_active_tools())


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(main(folder))
