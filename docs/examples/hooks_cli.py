"""Hooks of the command line and its user interface: slash commands, flags, message
renderers, output modes, and the decisions around switching, forking and the user's
own shell commands.

This file is a plugin and a script. As a plugin it replaces the print mode (-p):

    pi -e docs/examples/hooks_cli.py -e docs/examples/offline_model.py \\
       --model scripted/scripted-model --shout -p "hi"

Run as a script (python docs/examples/hooks_cli.py), it fires the other hooks the way
the interactive and RPC modes do, and then runs that pi command.
"""

import asyncio
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import click

from pi_core import (
    CliCommand,
    Command,
    EntryRenderer,
    Flag,
    MarkdownTransformer,
    MessageRenderer,
    Mode,
    Shortcut,
    ToolRenderer,
    hookimpl,
)


async def boxed_print(app):
    """A replacement for the print mode: the answer in a box."""
    prompt = app.initial_prompt()
    await app.harness.prompt(prompt.text or "", prompt.images, source="print")
    answer = app.harness.messages[-1].text
    if app.harness.ctx.get_flag("shout"):  # pi --shout, this plugin's flag
        answer = answer.upper()
    app.write(f"+{'-' * (len(answer) + 2)}+\n| {answer} |\n+{'-' * (len(answer) + 2)}+\n")
    return 0


async def stats(args, ctx):
    """/stats: a slash command's handler gets the text after the name and ctx."""
    ctx.ui.notify(f"stats for {args or 'this session'}")
    return f"{len(ctx.session.entries)} entries"


@hookimpl
def register_modes(ctx):
    return [Mode("text", boxed_print, "print the answer in a box")]  # replaces -p


@hookimpl
def register_commands(ctx):
    return [Command("stats", "Show session statistics", handler=stats, argument_hint="[scope]")]


@hookimpl
def register_flags(ctx):
    # pi --shout (a switch) and pi --greeting TEXT; read with ctx.get_flag(name)
    return [Flag("shout", "Print the answer in capitals"),
            Flag("greeting", "Say this first", type="string", default="")]


@hookimpl
def configuration_problems(ctx):
    # checked once the flags are read, before anything runs: a line here stops pi (exit 2)
    greeting = ctx.get_flag("greeting") or ""
    return ["--greeting: at most 80 characters"] if len(greeting) > 80 else None


@click.command("hello")
@click.argument("name")
def hello(name):
    """pi hello NAME: a subcommand of this plugin's."""
    click.echo(f"Hello, {name}!")


@hookimpl
def register_cli_commands(ctx):
    # pi hello NAME; the module named is imported only when the subcommand runs
    return [CliCommand("hello", f"{__name__}:hello", "Greet someone")]


@hookimpl
def register_message_renderers(ctx):
    # The interactive mode draws this plugin's "note" messages with it.
    return [MessageRenderer("note", lambda message, expanded: f"📝 {message.content}")]


@hookimpl
def register_shortcuts(ctx):
    # The interactive mode binds alt+s to this handler.
    return [Shortcut("alt+s", lambda ctx: ctx.ui.notify("saved"), "Save a note")]


@hookimpl
def session_before_switch(event, ctx):
    if event.reason == "new" and ctx.settings.get("keepSession"):
        return {"cancel": True}  # a dict works as a result, too


@hookimpl
def session_before_fork(event, ctx):
    print(f"session_before_fork: at {event.entry_id}")


@hookimpl
def user_bash(event, ctx):
    if event.command.startswith("sudo "):
        return {"cancel": True}
    return None  # run it as usual


@hookimpl
def project_trust(event, ctx):
    # Before a project's own .pi resources load: trust the folders under ~/work,
    # and save the decision in trust.json; leave every other folder to the user.
    if event.cwd.startswith(str(Path.home() / "work")):
        return {"trusted": "yes", "remember": True}
    return {"trusted": "undecided"}

@hookimpl
def register_markdown_transformers(ctx):
    # The chat shows :warning: in answers as a symbol; the message itself keeps it.
    return [MarkdownTransformer(lambda markdown, info: markdown.replace(":warning:", "⚠"))]


@hookimpl
def register_entry_renderers(ctx):
    # The chat draws this plugin's "status-card" entries (ctx.append_entry) with it.
    return [EntryRenderer("status-card", lambda entry, options: f"{entry.data['title']}: {entry.data['count']}"
                          f" ({options.key_hint('app.tools.expand', 'for more')})")]


@hookimpl
def register_tool_renderers(ctx):
    # Calls to an MCP server's tools look alike, even before the server is up.
    def draw(name, next):
        mine = {"render_call": lambda args, theme, context: [f"🔌 {name}"]}
        return next() or mine if name.startswith("mcp__") else next()
    return [ToolRenderer(draw)]


async def fire_by_hand() -> None:
    """What the interactive and RPC modes do with these hooks."""
    from pi_core import Settings, create_harness
    from pi_core.testing import Reply, ScriptedProvider, scripted_model

    this_file = sys.modules[__name__]  # the plugin is this module
    harness = await create_harness(ScriptedProvider([Reply(text="ok")]), this_file,
                                   model=scripted_model(), settings=Settings({"keepSession": True}))
    await harness.prompt("hi")
    ctx, hooks = harness.ctx, harness.plugins

    commands = await hooks.call("register_commands", ctx=ctx)
    print("commands:", [f"/{c.name} {c.argument_hint}" for c in commands])
    print("/stats ->", await commands[0].handler("", ctx))
    flags = await hooks.call("register_flags", ctx=ctx)
    print("flags:", [f"--{f.name}" for f in flags])
    renderers = await hooks.call("register_message_renderers", ctx=ctx)
    print("renderer for 'note':", renderers[0].render(SimpleNamespace(content="remember"), False))
    shortcuts = await hooks.call("register_shortcuts", ctx=ctx)
    print("shortcuts:", [f"{s.key}: {s.description}" for s in shortcuts])
    info = SimpleNamespace(message_type="assistant", is_streaming=False, available_width=80)
    transformer, = await hooks.call("register_markdown_transformers", ctx=ctx)
    print("markdown shown:", transformer.transform("careful :warning:", info))
    card, = await hooks.call("register_entry_renderers", ctx=ctx)
    options = SimpleNamespace(expanded=False, key_hint=lambda key, words: f"ctrl+o {words}")
    print("entry shown:", card.render(SimpleNamespace(data={"title": "Indexed files", "count": 17}), options))
    resolver, = await hooks.call("register_tool_renderers", ctx=ctx)
    print("mcp call shown:", resolver.resolve("mcp__docs__find", lambda: None)["render_call"]({}, None, {}))

    switch = await hooks.call("session_before_switch", ctx=ctx,
                                event=SimpleNamespace(reason="new", target=None))
    print("session_before_switch: cancel =", switch.cancel)
    await hooks.call("session_before_fork", ctx=ctx, event=SimpleNamespace(entry_id="abcd1234"))
    for command in ("sudo rm -rf /", "ls"):
        decision = await hooks.call("user_bash", ctx=ctx, event=SimpleNamespace(
            command=command, exclude_from_context=False, cwd=ctx.cwd))
        print(f"user_bash {command!r}: {'cancelled' if decision and decision.cancel else 'runs'}")
    for folder in (Path.home() / "work" / "app", Path("/tmp/cloned")):
        [answer] = await hooks.call("project_trust", ctx=ctx, event=SimpleNamespace(cwd=str(folder)))
        print(f"project_trust {folder.name}: {answer['trusted']}")


if __name__ == "__main__":
    asyncio.run(fire_by_hand())
    here = Path(__file__).parent
    out = subprocess.run([sys.executable, "-m", "pi_plugins.cli", "--no-session",
                          "-e", str(here / "hooks_cli.py"), "-e", str(here / "offline_model.py"),
                          "--model", "scripted/scripted-model", "--shout", "-p", "hi"],
                         capture_output=True, text=True)
    print(out.stdout, end="")
