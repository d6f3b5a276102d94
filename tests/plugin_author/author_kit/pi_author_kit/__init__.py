"""pi-author-kit: a third-party plugin package as a first-time author writes one, using
every documented hook kind and ctx member it needs. Installed as a wheel (entry points
``pi.plugins``), it is driven by tests through ``pi -p``, ``--mode json`` and
``--mode rpc``. What it sees goes, one JSON object a line, to the file named by the
``AUTHOR_LOG`` environment variable."""

from __future__ import annotations

import json
import os

import attrs

from pi_core import Tool, hookimpl, tool
from pi_core.protocol.shell import Mode
from pi_core.protocol.commands import Command, Flag
from pi_core.protocol.messages import CustomMessage, TextContent, UserMessage
from pi_core.protocol.model import Model

from pi_author_kit.echo import API, PROVIDER, EchoProvider

SNIPPET = "tells the time in the author's town"


def log(kind: str, **data) -> None:
    path = os.environ.get("AUTHOR_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps({"kind": kind, **data}, default=str) + "\n")


@tool(prompt_snippet=SNIPPET, prompt_guidelines=["Say which town the time is for."])
def author_time(args, run):
    """The time in the author's town."""
    return "It is noon in Tallinn."


shout = Tool(name="shout", description="Shout the text back.",
             parameters={"type": "object", "properties": {"text": {"type": "string"}}},
             function=lambda args, run: str(args.get("text", "")).upper() + "!",
             summarize=lambda args: f"shout {args.get('text', '')}")


# ---------------------------------------------------------------- registration

@hookimpl
def register_providers():
    return [EchoProvider()]


@hookimpl
def register_models():
    # keyless and in-process (no base URL), small: below the default reserveTokens
    return [Model(id="echo-small", provider=PROVIDER, api=API, name="Echo small",
                  context_window=8192, max_tokens=1024)]


@hookimpl
def register_tools():
    return [author_time]


@hookimpl
def register_flags():
    return [Flag("author-greeting", "Greet in every answer", type="string", default=""),
            Flag("author-wrong-role", "Replace answers with a user message (a plugin bug)"),
            Flag("author-notes", "Write compaction summaries as a dict"),
            Flag("author-bad-compact", "Return a malformed compaction result")]


async def run_author_mode(app):
    prompt = app.initial_prompt()
    await app.harness.prompt(prompt.text or "", source="print")
    app.write(f"[author mode] {app.harness.messages[-1].text}\n")
    return 0


@hookimpl
def register_modes():
    return [Mode("author", run_author_mode, "the answer, marked")]


# ---------------------------------------------------------------- commands

async def kickoff(args, ctx):
    ctx.send_user_message(args or "kicked off")  # idle: starts a run


async def later(args, ctx):
    ctx.send_user_message(args or "later context", deliver_as="next_turn")


async def note(args, ctx):
    ctx.send_message(CustomMessage(custom_type="author-note", content=args or "a note"),
                     trigger_turn=True)


async def add_tool(args, ctx):
    ctx.register_tool(shout)


async def remove_tool(args, ctx):
    log("unregistered", found=ctx.unregister_tool("shout"))


async def new(args, ctx):
    result = await ctx.new_session()
    log("new_session", cancelled=result.cancelled, file=str(ctx.session.file))


async def fork_at(args, ctx):
    first = next(e for e in ctx.session.path() if getattr(e, "type", "") == "message")
    result = await ctx.fork(first.id, position="at")
    log("fork", cancelled=result.cancelled, entries=len(ctx.session.path()))


async def back_to_start(args, ctx):
    first = next(e for e in ctx.session.path() if getattr(e, "type", "") == "message")
    result = await ctx.navigate_tree(first.id)
    log("navigate_tree", cancelled=result.cancelled, leaf=ctx.session.leaf_id, target=first.id)


async def switch(args, ctx):
    result = await ctx.switch_session(args)
    log("switch_session", cancelled=result.cancelled)


async def reload(args, ctx):
    await ctx.wait_for_idle()
    await ctx.reload()


async def dup_one(args, ctx):
    log("dup", which=1)


@hookimpl
def register_commands():
    return [Command("kickoff", "Start a run from a plugin", kickoff),
            Command("later", "Add context to the next prompt", later),
            Command("note", "A plugin message that triggers a turn", note),
            Command("author-add-tool", "Register the shout tool now", add_tool),
            Command("author-remove-tool", "Unregister the shout tool", remove_tool),
            Command("author-new", "A new session", new),
            Command("author-fork", "Fork at the first message", fork_at),
            Command("author-tree", "Back to the first message", back_to_start),
            Command("author-switch", "Resume a session file", switch),
            Command("author-reload", "Reload", reload),
            Command("dup", "Two plugins name this", dup_one)]


# ---------------------------------------------------------------- events

@hookimpl
def session_start(event, ctx):
    log("session_start", reason=event.reason, greeting=ctx.get_flag("author-greeting"))


@hookimpl
def session_shutdown(event):
    log("session_shutdown", reason=event.reason)


@hookimpl
def resources_discover(event):
    log("resources_discover", reason=event.reason)
    return []


@hookimpl
def input(event):
    log("input", text=event.text, source=event.source)


@hookimpl
def before_agent_start(event, ctx):
    greeting = ctx.get_flag("author-greeting")
    if greeting:
        return attrs.evolve(event, system_prompt=event.system_prompt + f"\nGREETING={greeting}")
    return None


@hookimpl
def turn_start(event):
    log("turn_start", turn_index=event.turn_index)


@hookimpl
def message_end(message, ctx):
    if message.role == "assistant" and ctx.get_flag("author-wrong-role"):
        return UserMessage(content=[TextContent("the plugin's bug")])
    return None


@hookimpl
def user_bash(event):
    if event.command.startswith("remote "):
        return {"result": {"output": f"ran remotely: {event.command[7:]}", "exitCode": 0}}
    return None


@hookimpl
def session_before_fork(event):
    log("before_fork", position=event.position, entry_id=event.entry_id)


@hookimpl
def session_before_compact(event, ctx):
    plan = event.preparation
    log("before_compact", planned=plan is not None,
        to_summarize=len(plan.messages_to_summarize) if plan else 0)
    if ctx.get_flag("author-bad-compact"):
        return {"summery": "a typo"}
    if ctx.get_flag("author-notes") and plan is not None:
        return {"summary": f"author notes on {len(plan.messages_to_summarize)} messages"}
    return None
