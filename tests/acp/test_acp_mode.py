"""``pi --mode acp`` driven by an editor's side built on the ``agent-client-protocol``
package: sessions, streamed updates, tool calls with diffs, cancel, ``/compact``,
permission requests answered by the client, modes, models, commands, load, exit."""

import asyncio
import json
import sys
import time

import pytest
from acp import text_block

from support.acp_client import AcpClient
from support.cli import trust_project
from support.llm_server import Reply
from support.real_clients import PiHome

pytestmark = pytest.mark.process

MODELS = [{"id": "test-model", "reasoning": True}, {"id": "other-model"}]
ASKING_PLUGIN = '''
from pi_core import hookimpl
from pi_core.protocol.events import ToolCallDecision

SEEN = []


@hookimpl
async def before_tool_call(event, ctx):
    if event.tool_name != "bash":
        return None
    SEEN.append(ctx.ui.has_ui)
    if not await ctx.ui.confirm(f"Run {event.arguments['command']}?", "the model asks"):
        return ToolCallDecision(block=True, reason="The user said no.")
    return None
'''


def home_for(tmp_path, server, **kwargs) -> PiHome:
    home = PiHome(tmp_path / "ours", server, "ours", models=MODELS,
                  settings={"compaction": {"keepRecentTokens": 5}, "retry": {"baseDelayMs": 10}}, **kwargs)
    prompts = home.cwd / ".pi" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text("---\ndescription: Review the code\nargument-hint: <file>\n---\nReview $1\n")
    skill = home.cwd / ".pi" / "skills" / "tidy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: tidy\ndescription: Tidy the workspace\n---\nTidy up.\n")
    (home.cwd / "asking.py").write_text(ASKING_PLUGIN)
    trust_project(home.agent_dir, home.cwd)  # the editor's user trusted this project
    return home


def pi_acp(home: PiHome, *flags: str):
    command = [sys.executable, "-m", "pi_plugins.cli", "--mode", "acp", "-e", str(home.cwd / "asking.py"), *flags]
    return AcpClient.spawn(command, env=home.env, cwd=str(home.cwd))


def ofkind(updates, kind, call_id=None):
    return [u for u in updates if u["sessionUpdate"] == kind and (call_id is None or u.get("toolCallId") == call_id)]


async def editor(home: PiHome, server) -> dict:
    async with pi_acp(home, "--model", "local/test-model") as client:
        init = await client.conn.initialize(protocol_version=1)
        assert init.protocol_version == 1 and init.agent_capabilities.load_session is True
        session = await client.conn.new_session(cwd=str(home.cwd), mcp_servers=[])
        sid = session.session_id
        commands = await client.wait_for(lambda u: u["sessionUpdate"] == "available_commands_update")

        # a prompt with thinking, a new file written and then edited
        server.push(Reply(thinking="Let me think.", text="Writing.",
                          tool_calls=[("write", {"path": "notes.txt", "content": "one\n"})]),
                    Reply(tool_calls=[("edit", {"path": "notes.txt", "edits": [{"oldText": "one", "newText": "two"}]})]),
                    Reply(text="Done."))
        first = await client.conn.prompt(session_id=sid, prompt=[text_block("write notes")])
        tools_mark = len(client.updates)

        # the plugin asks; the client rejects, then allows
        client.answer = lambda request: next(o["optionId"] for o in request["options"] if o["kind"] == "reject_once")
        server.push(Reply(tool_calls=[("bash", {"command": "echo denied"}, "call-denied")]), Reply(text="Blocked."))
        denied = await client.conn.prompt(session_id=sid, prompt=[text_block("run it")])
        client.answer = lambda request: next(o["optionId"] for o in request["options"] if o["kind"] == "allow_once")
        server.push(Reply(tool_calls=[("bash", {"command": "echo allowed"}, "call-allowed")]), Reply(text="Ran."))
        allowed = await client.conn.prompt(session_id=sid, prompt=[text_block("run it again")])

        # cancel a long answer
        server.push(Reply(text="word " * 500, delta_size=5, delay=0.02))
        mark = len(client.updates)
        talking = asyncio.ensure_future(client.conn.prompt(session_id=sid, prompt=[text_block("talk")]))
        await client.wait_for(lambda u: u["sessionUpdate"] == "agent_message_chunk", after=mark)
        await client.conn.cancel(session_id=sid)
        cancelled = await asyncio.wait_for(talking, 20)

        # modes (thinking levels) and models
        await client.conn.set_session_mode(session_id=sid, mode_id="high")
        mode_update = await client.wait_for(lambda u: u["sessionUpdate"] == "current_mode_update")
        configured = await client.conn.set_config_option(config_id="model", session_id=sid, value="local/other-model")
        back = await client.conn._conn.send_request("session/set_model", {"sessionId": sid, "modelId": "local/test-model"})

        # /compact
        server.default = Reply(text="## Goal\nThe summary.")
        compact_mark = len(client.updates)
        compact = await client.conn.prompt(session_id=sid, prompt=[text_block("/compact")])
        return {"session": session, "commands": commands, "first": first, "denied": denied, "allowed": allowed,
                "cancelled": cancelled, "updates": list(client.updates), "tools_mark": tools_mark,
                "permissions": list(client.permission_requests), "mode_update": mode_update,
                "configured": configured, "back": back, "compact": compact,
                "compact_text": client.text(after=compact_mark)}


def test_an_acp_client_drives_pi_through_a_whole_editor_session(tmp_path, server):
    home = home_for(tmp_path, server)
    seen = asyncio.run(asyncio.wait_for(editor(home, server), 90))
    session, updates = seen["session"], seen["updates"]
    # the ACP session id is the session file's id
    [session_file] = sorted((home.agent_dir / "sessions").rglob("*.jsonl"))
    header = json.loads(session_file.read_text().splitlines()[0])
    assert session.session_id == header["id"]
    assert session.modes.current_mode_id == "medium"
    assert [m.id for m in session.modes.available_modes] == ["off", "minimal", "low", "medium", "high"]
    [model_option] = session.config_options
    model_option = model_option.root if hasattr(model_option, "root") else model_option
    assert model_option.category == "model" and model_option.current_value == "local/test-model"
    assert {o.value for o in model_option.options} == {"local/test-model", "local/other-model"}

    # commands without the slash, with their descriptions
    commands = {c["name"]: c for c in seen["commands"]["availableCommands"]}
    assert commands["review"]["description"] == "Review the code" and commands["review"]["input"]["hint"] == "<file>"
    assert commands["skill:tidy"]["description"] == "Tidy the workspace"
    assert "compact" in commands and not any(name.startswith("/") for name in commands)

    # streamed thought and message chunks; write then edit, each with its diff
    assert seen["first"].stop_reason == "end_turn"
    first = updates[:seen["tools_mark"]]
    assert "Let me think." in "".join(u["content"]["text"] for u in ofkind(first, "agent_thought_chunk"))
    assert "Writing." in "".join(u["content"]["text"] for u in ofkind(first, "agent_message_chunk"))
    announced = ofkind(first, "tool_call")
    assert [(t["kind"], t["status"]) for t in announced] == [("edit", "pending"), ("edit", "pending")]
    notes = str(home.cwd / "notes.txt")
    ends = [u for u in ofkind(first, "tool_call_update") if u["status"] in ("completed", "failed")]
    assert [u["status"] for u in ends] == ["completed", "completed"]
    write_diff, edit_diff = ([c for c in u["content"] if c["type"] == "diff"][0] for u in ends)
    assert write_diff == {"type": "diff", "path": notes, "newText": "one\n"}  # a new file: no old text
    assert edit_diff == {"type": "diff", "path": notes, "oldText": "one\n", "newText": "two\n"}
    assert (home.cwd / "notes.txt").read_text() == "two\n"

    # permission requests name the pending tool call; a rejection fails it
    denied_request, allowed_request = seen["permissions"]
    assert denied_request["toolCall"]["toolCallId"] == "call-denied"
    assert allowed_request["toolCall"]["toolCallId"] == "call-allowed"
    kinds = {o["kind"] for o in denied_request["options"]}
    assert {"allow_once", "reject_once"} <= kinds
    assert ofkind(updates, "tool_call_update", "call-denied")[-1]["status"] == "failed"
    assert ofkind(updates, "tool_call", "call-denied")[0]["kind"] == "execute"
    finished = ofkind(updates, "tool_call_update", "call-allowed")[-1]
    assert finished["status"] == "completed" and "allowed" in json.dumps(finished["content"])

    # cancel, modes, models, compaction
    assert seen["cancelled"].stop_reason == "cancelled"
    assert seen["mode_update"]["currentModeId"] == "high"
    configured = seen["configured"].config_options[0]
    configured = configured.root if hasattr(configured, "root") else configured
    assert configured.current_value == "local/other-model"
    assert seen["back"] == {}
    assert seen["compact"].stop_reason == "end_turn" and "Compaction completed." in seen["compact_text"]
    assert "The summary." in seen["compact_text"]
    kept = [json.loads(l) for l in session_file.read_text().splitlines()]
    assert kept[-1]["type"] == "compaction"
    assert [e["modelId"] for e in kept if e["type"] == "model_change"][-2:] == ["other-model", "test-model"]


async def load_then_close(home: PiHome, session_id: str) -> tuple:
    async with pi_acp(home, "--model", "local/test-model") as client:
        await client.conn.initialize(protocol_version=1)
        loaded = await client.conn.load_session(cwd=str(home.cwd), session_id=session_id, mcp_servers=[])
        replayed = list(client.updates)
        process = client.process
        process.stdin.close()
        started = time.monotonic()
        await asyncio.wait_for(process.wait(), 10)
        return loaded, replayed, time.monotonic() - started, process.returncode


def test_session_load_replays_the_history_and_restores_the_model_and_stdin_closing_ends_pi(tmp_path, server):
    home = home_for(tmp_path, server)

    async def first_run() -> str:
        (home.cwd / "todo.txt").write_text("buy milk\n")
        async with pi_acp(home, "--model", "local/test-model") as client:
            await client.conn.initialize(protocol_version=1)
            session = await client.conn.new_session(cwd=str(home.cwd), mcp_servers=[])
            server.push(Reply(text="Reading.", tool_calls=[("read", {"path": "todo.txt"}, "call-read")]),
                        Reply(text="It says buy milk."))
            await client.conn.set_config_option(config_id="model", session_id=session.session_id,
                                                value="local/other-model")
            await client.conn.prompt(session_id=session.session_id, prompt=[text_block("list files")])
            return session.session_id

    session_id = asyncio.run(asyncio.wait_for(first_run(), 60))
    loaded, replayed, took, code = asyncio.run(asyncio.wait_for(load_then_close(home, session_id), 60))
    kinds = [u["sessionUpdate"] for u in replayed if u["sessionUpdate"] != "available_commands_update"]
    assert kinds == ["user_message_chunk", "agent_message_chunk", "tool_call", "agent_message_chunk"]
    assert replayed[0]["content"]["text"] == "list files"
    call = next(u for u in replayed if u["sessionUpdate"] == "tool_call")
    assert call["toolCallId"] == "call-read" and call["status"] == "completed" and call["kind"] == "read"
    assert "buy milk" in json.dumps(call["content"])
    option = loaded.config_options[0]
    option = option.root if hasattr(option, "root") else option
    # the session's model, restored over the --model of this run
    assert option.current_value == "local/other-model"
    assert took < 5 and code == 0


def test_pi_permissions_asks_in_the_editor(tmp_path, server):
    """contrib/pi-permissions (loaded from its source folder) asks with ctx.ui.select:
    its choices arrive as the permission request's options."""
    from pathlib import Path

    source = Path(__file__).parents[2] / "contrib" / "pi-permissions" / "src"
    home = home_for(tmp_path, server)
    settings = json.loads((home.agent_dir / "settings.json").read_text())
    (home.agent_dir / "settings.json").write_text(json.dumps({**settings, "permissions": {"default": "ask"}}))
    env = {**home.env, "PYTHONPATH": str(source)}

    async def run() -> tuple:
        command = [sys.executable, "-m", "pi_plugins.cli", "--mode", "acp", "--model", "local/test-model",
                   "-e", str(source / "pi_permissions")]
        async with AcpClient.spawn(command, env=env, cwd=str(home.cwd)) as client:
            await client.conn.initialize(protocol_version=1)
            session = await client.conn.new_session(cwd=str(home.cwd), mcp_servers=[])
            client.answer = lambda request: next(o["optionId"] for o in request["options"]
                                                 if o["name"].startswith("Allow every bash call"))
            server.push(Reply(tool_calls=[("bash", {"command": "echo first"}, "call-1")]),
                        Reply(tool_calls=[("bash", {"command": "echo second"}, "call-2")]), Reply(text="Both ran."))
            done = await client.conn.prompt(session_id=session.session_id, prompt=[text_block("run twice")])
            return done, list(client.permission_requests), list(client.updates)

    done, requests, updates = asyncio.run(asyncio.wait_for(run(), 60))
    assert done.stop_reason == "end_turn"
    [request] = requests  # "every bash call for this session": the second call is not asked about
    assert request["toolCall"]["toolCallId"] == "call-1"
    options = {o["name"]: o["kind"] for o in request["options"]}
    assert options["Allow once"] == "allow_once" and options["Deny"] == "reject_once"
    assert options["Allow every bash call for this session"] == "allow_always"
    for call in ("call-1", "call-2"):
        assert ofkind(updates, "tool_call_update", call)[-1]["status"] == "completed"


def test_a_session_works_in_the_folder_the_editor_opened_not_where_pi_started(tmp_path, server):
    """session/new's cwd is the session's folder (pi-acp starts one pi there): write, edit
    and bash work in it, the session file is filed under it and the diffs name its files."""
    home = home_for(tmp_path, server)
    project = tmp_path / "elsewhere" / "project"
    project.mkdir(parents=True)

    async def run() -> tuple:
        async with pi_acp(home, "--model", "local/test-model") as client:
            await client.conn.initialize(protocol_version=1)
            session = await client.conn.new_session(cwd=str(project), mcp_servers=[])
            server.push(Reply(tool_calls=[("write", {"path": "notes.txt", "content": "one\n"})]),
                        Reply(tool_calls=[("edit", {"path": "notes.txt",
                                                    "edits": [{"oldText": "one", "newText": "two"}]})]),
                        Reply(tool_calls=[("bash", {"command": "pwd > where.txt"})]),
                        Reply(text="Done."))
            client.answer = lambda request: next(o["optionId"] for o in request["options"]
                                                 if o["kind"] == "allow_once")
            done = await client.conn.prompt(session_id=session.session_id, prompt=[text_block("work")])
            updates = list(client.updates)
        async with pi_acp(home, "--model", "local/test-model") as client:  # found again from that folder
            await client.conn.initialize(protocol_version=1)
            await client.conn.load_session(cwd=str(project), session_id=session.session_id, mcp_servers=[])
            replayed = client.text()
        return session, done, updates, replayed

    session, done, updates, replayed = asyncio.run(asyncio.wait_for(run(), 90))
    assert done.stop_reason == "end_turn" and "Done." in replayed
    assert (project / "notes.txt").read_text() == "two\n"
    assert (project / "where.txt").read_text().strip() == str(project)
    assert not (home.cwd / "notes.txt").exists() and not (home.cwd / "where.txt").exists()
    assert f"Current working directory: {project}" in json.dumps(server.requests[0].body)
    diffs = [c for u in ofkind(updates, "tool_call_update") for c in u.get("content") or () if c["type"] == "diff"]
    assert [d["path"] for d in diffs] == [str(project / "notes.txt")] * 2
    from pi_core.session.locations import session_dir_for

    with_id = [p for p in (home.agent_dir / "sessions").rglob("*.jsonl") if session.session_id in p.name]
    [session_file] = with_id
    assert session_file.parent.name == session_dir_for(str(project)).name
    assert json.loads(session_file.read_text().splitlines()[0])["cwd"] == str(project)
