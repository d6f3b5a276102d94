"""What plugins bring to the interactive mode: commands, dialogs through ctx.ui,
shortcuts and renderers for their own messages (in-process, on an emulated screen)."""

import pytest
from support.llm_server import Reply

DEPLOY_PLUGIN = '''
from pi_core import hookimpl
from pi_core.protocol.commands import Command, MessageRenderer, Shortcut
from pi_core.protocol.messages import CustomMessage


async def deploy(args, ctx):
    if await ctx.ui.confirm("Deploy to production?", "target: " + (args or "default")):
        ctx.ui.notify("Deployed " + (args or "default"))
    else:
        ctx.ui.notify("Deployment cancelled", "warning")


async def choose_colour(ctx):
    colour = await ctx.ui.select("Pick a colour", ["red", "green", "blue"])
    name = await ctx.ui.input("Name it", "a short name")
    ctx.send_message(CustomMessage(custom_type="palette", content=f"{colour} is called {name}"),
                     deliver_as="steer")
    ctx.ui.notify(f"picked {colour} as {name}")
    ctx.ui.set_status("palette", f"palette: {colour}")


async def notes(args, ctx):
    text = await ctx.ui.editor("Release notes", "- fixed the parser")
    ctx.ui.set_widget("notes", (text or "").split("\\n"))
    ctx.ui.set_widget("hint", ["(notes saved)"], placement="belowEditor")
    answered = await ctx.ui.confirm("Publish now?", "nobody will answer", timeout=0.5)
    ctx.ui.notify(f"publish answer: {answered}")


@hookimpl
def register_commands():
    return [Command("deploy", "Deploy the app", deploy, argument_hint="<target>"),
            Command("notes", "Write release notes", notes)]


@hookimpl
def register_shortcuts():
    return [Shortcut("alt+k", choose_colour, "pick a colour")]


@hookimpl
def register_message_renderers():
    return [MessageRenderer("palette", lambda message, expanded: "PALETTE >> " + message.content)]


@hookimpl
def before_tool_call(event, ctx):
    async def ask():
        if not await ctx.ui.confirm("Allow bash?", event.arguments.get("command", "")):
            return {"block": True, "reason": "the user said no"}
    return ask()
'''


def test_a_plugin_command_asks_through_a_confirm_dialog(pi_screen, server):
    term = pi_screen(plugin=DEPLOY_PLUGIN)
    term.type("/dep")
    term.wait_for("Deploy the app")  # plugin commands complete like built-in ones
    term.press("C-c")
    term.wait_drawn(lambda s: term.editor(s) == "")
    term.submit("/deploy staging")
    dialog = term.wait_for("Deploy to production?")
    assert "target: staging" in dialog and "→ Yes" in dialog and "  No" in dialog
    term.press("Down")
    term.wait_for("→ No")
    term.press("Enter")
    screen = term.wait_for("Warning: Deployment cancelled")
    assert "Deploy to production?" not in screen  # the editor is back
    term.submit("/deploy staging")
    term.wait_for("→ Yes")
    term.press("Enter")
    term.wait_for("Deployed staging")


def test_a_plugin_can_ask_before_a_tool_runs(pi_screen, server):
    server.push(Reply(text="Removing.", tool_calls=[("bash", {"command": "echo removed-$((1+1))"})]),
                Reply(text="It was blocked."))
    term = pi_screen(plugin=DEPLOY_PLUGIN)
    term.submit("clean up")
    dialog = term.wait_for("Allow bash?")
    assert "echo removed-$((1+1))" in dialog
    term.press("Down", "Enter")
    screen = term.wait_for("It was blocked.")
    assert "the user said no" in screen and "removed-2" not in screen


def test_a_plugin_shortcut_opens_select_and_input_and_its_renderer_shows_the_message(pi_screen, server):
    server.push(Reply(text="Nice palette."))
    term = pi_screen(plugin=DEPLOY_PLUGIN)
    term.press("M-k")
    term.wait_for("Pick a colour")
    term.press("Down")
    term.press("Enter")
    term.wait_for("Name it")
    term.type("leaf")
    term.press("Enter")
    screen = term.wait_drawn("picked green as leaf")
    assert screen.rstrip().split("\n")[-1] == "palette: green"  # a status line under the footer
    term.submit("what do you think?")
    screen = term.wait_for("Nice palette.")
    assert "PALETTE >> green is called leaf" in screen


def test_plugin_widgets_a_multi_line_editor_and_a_dialog_that_times_out(pi_screen, server):
    term = pi_screen(plugin=DEPLOY_PLUGIN)
    term.submit("/notes")
    term.wait_for("Release notes")
    term.press("C-j")
    term.type("- faster start-up")
    term.wait_for("- faster start-up")
    term.press("Enter")
    term.wait_for("Publish now?")
    screen = term.wait_drawn("publish answer: False", timeout=5)  # nobody answered in 0.5 s
    assert "Publish now?" not in screen
    lines = screen.rstrip().split("\n")
    editor_top = max(i for i, line in enumerate(lines[:-3]) if set(line) == {"─"}) - 2
    assert lines.index(" - fixed the parser") < lines.index(" - faster start-up") < editor_top
    assert lines[-3] == " (notes saved)"  # below the editor, above the footer


RELOADABLE = '''
from pi_core import hookimpl
from pi_core.protocol.commands import Command

VERSION = "one"


async def version(args, ctx):
    ctx.ui.notify("plugin version " + VERSION)


@hookimpl
def register_commands():
    return [Command("version", "Say the plugin's version", version)]
'''


@pytest.mark.process
def test_reload_in_the_chat_picks_up_a_changed_plugin_without_a_restart(pi_tui, server):
    term = pi_tui(plugin=RELOADABLE)
    term.submit("/version")
    term.wait_for("plugin version one")
    plugin_file = term.home / "test_plugin.py"
    plugin_file.write_text(plugin_file.read_text().replace('VERSION = "one"', 'VERSION = "two"'))
    term.submit("/reload")
    term.wait_for("Reloaded plugins, skills, prompt templates, context files and keybindings.")
    term.submit("/version")
    term.wait_for("plugin version two")
