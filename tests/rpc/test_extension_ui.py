"""The extension-UI sub-protocol: plugin dialogs answered by the client, fire-and-forget
requests, plugin commands, and plugin errors, through ``pi --mode rpc`` (in-process; the
end of stdin while a dialog waits, in a real process)."""

import json
import textwrap

import pytest

from support.llm_server import Reply

PLUGIN = textwrap.dedent('''
    from pi_core import hookimpl
    from pi_core.protocol.commands import Command
    from pi_core.protocol.events import ToolCallDecision


    @hookimpl
    async def before_tool_call(event, ctx):
        if event.tool_name != "bash":
            return None
        if await ctx.ui.confirm("Run this command?", event.arguments["command"]):
            return None
        ctx.ui.notify("Command blocked by user", "warning")
        return ToolCallDecision(block=True, reason="Blocked by user")


    @hookimpl
    async def session_before_switch(event, ctx):
        if not await ctx.ui.confirm("Leave this session?", "", timeout=0.3):
            return {"cancel": True}


    async def greet(args, ctx):
        name = await ctx.ui.input("Your name?", "type a name")
        colour = await ctx.ui.select("Favourite colour?", ["red", "green"])
        text = await ctx.ui.editor("A note", f"Dear {name},")
        ctx.ui.set_status("greeter", f"greeted {name}")
        ctx.ui.set_widget("greeter", [f"{name} likes {colour}"], "belowEditor")
        ctx.ui.set_title(f"pi - {name}")
        ctx.ui.set_editor_text(text or "")
        ctx.ui.notify(f"Hello {name} ({colour}): {text}")


    async def explode(args, ctx):
        raise RuntimeError("the command broke")


    @hookimpl
    def register_commands(ctx):
        return [Command(name="greet", description="Greet someone", handler=greet),
                Command(name="explode", handler=explode)]
''')


def _with_ui_plugin(start, pi):
    plugin = pi.cwd / "ui_plugin.py"
    plugin.write_text(PLUGIN)
    return start("-e", str(plugin))


@pytest.fixture
def ui_rpc(start_rpc, pi):
    return _with_ui_plugin(start_rpc, pi)


@pytest.fixture
def ui_rpc_process(start_rpc_process, pi):
    return _with_ui_plugin(start_rpc_process, pi)


def ui_request(rpc, method: str, after: int = 0) -> dict:
    return rpc.event("extension_ui_request", after=after, method=method)


def test_a_plugin_confirm_during_a_tool_call_waits_for_the_clients_answer(ui_rpc, server):
    rpc = ui_rpc
    server.push(Reply(text="Listing.", tool_calls=[("bash", {"command": "echo allowed"})]),
                Reply(text="It ran."),
                Reply(text="Trying again.", tool_calls=[("bash", {"command": "echo denied"})]),
                Reply(text="It was blocked."))
    rpc.ok("prompt", message="list")
    ask = ui_request(rpc, "confirm")
    assert ask == {"type": "extension_ui_request", "id": ask["id"], "method": "confirm",
                   "title": "Run this command?", "message": "echo allowed"}
    assert len(server.requests) == 1 and not rpc.events("tool_execution_end"), "the tool waits"
    assert rpc.ok("get_state")["isStreaming"] is True, "commands are served while a dialog waits"
    rpc.answer_ui(ask, confirmed=True)
    end = rpc.event("tool_execution_end")
    assert end["isError"] is False and "allowed" in json.dumps(end["result"])
    first = rpc.event("agent_end")

    rpc.ok("prompt", message="again")
    ask = ui_request(rpc, "confirm", after=rpc.position(first))
    assert ask["message"] == "echo denied"
    rpc.answer_ui(ask, confirmed=False)
    blocked = rpc.event("tool_execution_end", after=rpc.position(ask))
    assert blocked["isError"] is True and "Blocked by user" in json.dumps(blocked["result"])
    notify = ui_request(rpc, "notify", after=rpc.position(ask))
    assert notify["message"] == "Command blocked by user" and notify["notifyType"] == "warning"
    rpc.event("agent_end", after=rpc.position(first) + 1)
    assert "Blocked by user" in json.dumps(server.requests[-1].body)


def test_a_cancelled_or_unanswered_dialog_gets_its_default(ui_rpc, server):
    rpc = ui_rpc
    server.push(Reply(text="Listing.", tool_calls=[("bash", {"command": "echo x"})]), Reply(text="ok"))
    rpc.ok("prompt", message="list")
    rpc.answer_ui(ui_request(rpc, "confirm"), cancelled=True)
    assert rpc.event("tool_execution_end")["isError"] is True
    rpc.event("agent_end")

    # session_before_switch asks with a 0.3 s timeout; nobody answers, so: no.
    assert rpc.ok("new_session") == {"cancelled": True}
    ask = ui_request(rpc, "confirm", after=rpc.position(rpc.events("agent_end")[-1]))
    assert ask["title"] == "Leave this session?" and ask["timeout"] == 300
    command = rpc.send("new_session")
    rpc.answer_ui(ui_request(rpc, "confirm", after=rpc.position(ask) + 1), confirmed=True)
    assert rpc.response_to(command)["data"] == {"cancelled": False}
    assert rpc.ok("get_state")["messageCount"] == 0


def test_a_plugin_command_runs_its_dialogs_through_the_client(ui_rpc):
    rpc = ui_rpc
    commands = rpc.ok("get_commands")["commands"]
    greet = next(c for c in commands if c["name"] == "greet")
    assert greet["description"] == "Greet someone" and greet["source"] == "extension"
    # pi's sourceInfo: the plugin file given with -e is a temporary, command-line source
    assert greet["sourceInfo"]["path"].endswith("ui_plugin.py")
    assert greet["sourceInfo"]["source"] == "cli" and greet["sourceInfo"]["scope"] == "temporary"
    command = rpc.send("prompt", message="/greet")
    name = ui_request(rpc, "input")
    assert name["title"] == "Your name?" and name["placeholder"] == "type a name"
    rpc.answer_ui(name, value="Ada")
    colour = ui_request(rpc, "select")
    assert colour["options"] == ["red", "green"]
    rpc.answer_ui(colour, value="green")
    note = ui_request(rpc, "editor")
    assert note["prefill"] == "Dear Ada,"
    rpc.answer_ui(note, value="Dear Ada, hello.")
    assert rpc.response_to(command)["success"] is True
    status = ui_request(rpc, "setStatus")
    assert (status["statusKey"], status["statusText"]) == ("greeter", "greeted Ada")
    widget = ui_request(rpc, "setWidget")
    assert widget["widgetLines"] == ["Ada likes green"] and widget["widgetPlacement"] == "belowEditor"
    assert ui_request(rpc, "setTitle")["title"] == "pi - Ada"
    assert ui_request(rpc, "set_editor_text")["text"] == "Dear Ada, hello."
    assert ui_request(rpc, "notify")["message"] == "Hello Ada (green): Dear Ada, hello."
    assert not rpc.events("agent_start"), "a command with a handler sends nothing to the model"
    ids = [l["id"] for l in rpc.events("extension_ui_request")]
    assert len(set(ids)) == len(ids)

    queued = rpc.request("steer", message="/greet")
    assert queued["success"] is False and "cannot be queued" in queued["error"]


def test_a_plugin_that_raises_is_reported_as_an_extension_error(ui_rpc):
    rpc = ui_rpc
    rpc.ok("prompt", message="/explode now")
    error = rpc.event("extension_error")
    assert error == {"type": "extension_error", "extensionPath": "command:explode", "event": "command",
                     "error": "the command broke"}
    assert rpc.ok("get_state")["isStreaming"] is False


def test_get_commands_lists_plugin_commands_prompt_templates_and_skills(start_rpc, pi):
    (pi.cwd / "ui_plugin.py").write_text(PLUGIN)
    prompts = pi.cwd / ".pi" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text("---\ndescription: Review the code\n---\nReview $1 carefully.\n")
    skill = pi.cwd / ".pi" / "skills" / "tidy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: tidy\ndescription: Tidy the workspace\n---\nTidy up.\n")
    pi.trust_project()  # the project's templates and skills load once it is trusted
    rpc = start_rpc("-e", str(pi.cwd / "ui_plugin.py"))
    commands = {c["name"]: c for c in rpc.ok("get_commands")["commands"]}
    infos = {name: command.pop("sourceInfo") for name, command in commands.items()}
    assert commands["greet"] == {"name": "greet", "description": "Greet someone", "source": "extension"}
    assert commands["explode"] == {"name": "explode", "source": "extension"}
    assert commands["review"] == {"name": "review", "description": "Review the code", "source": "prompt"}
    assert commands["skill:tidy"] == {"name": "skill:tidy", "description": "Tidy the workspace",
                                      "source": "skill"}
    # pi's sourceInfo: project resources are found automatically under <project>/.pi
    project = {"source": "auto", "scope": "project", "origin": "top-level", "baseDir": str(pi.cwd / ".pi")}
    assert infos["review"] == {"path": str(prompts / "review.md"), **project}
    assert infos["skill:tidy"] == {"path": str(skill / "SKILL.md"), **project}
    assert infos["greet"] == {"path": str(pi.cwd / "ui_plugin.py"), "source": "cli",
                              "scope": "temporary", "origin": "top-level"}


@pytest.mark.process
def test_stdin_eof_while_a_dialog_waits_ends_the_process_cleanly(ui_rpc_process, server, pi):
    rpc = ui_rpc_process
    server.push(Reply(text="Listing.", tool_calls=[("bash", {"command": "echo x"})]))
    rpc.ok("prompt", message="list")
    ui_request(rpc, "confirm")
    assert rpc.close(timeout=10) == 0
    assert rpc.events("agent_end")
    [session] = pi.sessions()
    assert "echo x" in session.read_text()
