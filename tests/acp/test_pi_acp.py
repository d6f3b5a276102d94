"""pi-acp 0.0.24 (the ACP adapter editors such as Zed use, which targets pi 0.73) starts
``pi --mode rpc --no-themes`` from PATH. With pi-harness as that ``pi`` an editor must see
what it sees with the real pi: initialize, session/new, a prompt with a tool call, a
cancel, and ``/compact``."""

import asyncio
import json
import re

import pytest
from acp import text_block

from support.acp_client import AcpClient
from support.llm_server import LlmServer, Reply
from support.programs import PI_ACP
from support.real_clients import PiHome

pytestmark = [pytest.mark.requires("pi", "pi-acp"), pytest.mark.process]


def script(server: LlmServer) -> None:
    server.push(
        Reply(text="Writing it.", tool_calls=[("write", {"path": "hello.txt", "content": "hello\n"})]),
        Reply(text="Wrote hello.txt."),
        # cancelled after its first word: a second a word, so a loaded machine cannot take in
        # more before the cancel lands (what was said decides where /compact cuts)
        Reply(text="word " * 500, delta_size=5, delay=1.0),
    )
    server.default = Reply(text="## Goal\nEditor summary.")  # the compaction's summary


def normalise(update: dict) -> dict:
    """What an editor shows of an update, without ids, paths of this run and numbers that
    are estimates (pi's token count and ours differ)."""
    kind = update["sessionUpdate"]
    if kind == "agent_message_chunk":
        text = re.sub(r"\d+", "N", update["content"].get("text", ""))
        # the split-turn summary's opening line is our own words, not pi's
        return {"kind": kind, "text": text.replace("No earlier history.", "No prior history.")}
    if kind in ("tool_call", "tool_call_update"):
        keep = {"kind": kind, "status": update.get("status")}
        if kind == "tool_call":
            keep.update(title=update.get("title"), toolKind=update.get("kind"))
        return keep
    if kind == "available_commands_update":
        return {"kind": kind, "names": sorted(c["name"] for c in update["availableCommands"])}
    return {"kind": kind}


def collapse(updates: list[dict]) -> list[dict]:
    """Message chunks joined and repeated statuses dropped (how a stream is split into
    deltas is the provider's business); the session title's update, sent whenever the
    adapter gets to it, is kept apart."""
    out: list[dict] = []
    status = None
    for update in updates:
        if update["kind"] == "session_info_update":
            continue
        if out and update["kind"] == "agent_message_chunk" == out[-1]["kind"]:
            out[-1] = {"kind": update["kind"], "text": out[-1]["text"] + update["text"]}
            continue
        if update["kind"] == "tool_call_update" and update["status"] == status:
            continue
        status = update.get("status", status)
        out.append(update)
    return out


async def editor_session(home: PiHome, adapter=PI_ACP, node: str = "node") -> dict:
    async with AcpClient.spawn([node, str(adapter / "dist" / "index.js")], env=home.env,
                               cwd=str(home.cwd)) as client:
        init = await client.conn.initialize(protocol_version=1)
        session = await client.conn.new_session(cwd=str(home.cwd), mcp_servers=[])
        sid = session.session_id
        await client.wait_for(lambda u: u["sessionUpdate"] == "available_commands_update")
        first = await client.conn.prompt(session_id=sid, prompt=[text_block("write hello.txt")])
        mark = len(client.updates)
        talking = asyncio.ensure_future(client.conn.prompt(session_id=sid, prompt=[text_block("talk")]))
        await client.wait_for(lambda u: u["sessionUpdate"] == "agent_message_chunk", after=mark)
        await client.conn.cancel(session_id=sid)
        cancelled = await asyncio.wait_for(talking, 20)
        cancel_mark = len(client.updates)
        compact = await client.conn.prompt(session_id=sid, prompt=[text_block("/compact")])
        return {
            "protocolVersion": init.protocol_version,
            "modes": sorted(m.id for m in session.modes.available_modes) if session.modes else None,
            "currentMode": session.modes.current_mode_id if session.modes else None,
            "stopReasons": [first.stop_reason, cancelled.stop_reason, compact.stop_reason],
            "file": (home.cwd / "hello.txt").read_text() if (home.cwd / "hello.txt").exists() else None,
            "firstPrompt": collapse([normalise(u) for u in client.updates[:mark]
                                     if u["sessionUpdate"] != "available_commands_update"]),
            "commands": [normalise(u) for u in client.of("available_commands_update")][:1],
            "compact": collapse([normalise(u) for u in client.updates[cancel_mark:]]),
            "cancelledText": client.text(after=mark).startswith("word"),
            "titles": len(client.of("session_info_update")),
        }


def run(tmp_path, which: str, adapter=PI_ACP, node: str = "node") -> dict:
    with LlmServer() as server:
        script(server)
        home = PiHome(tmp_path / which, server, which,
                      settings={"compaction": {"keepRecentTokens": 5}, "quietStartup": True})
        return asyncio.run(asyncio.wait_for(editor_session(home, adapter, node), 180))


def test_pi_acp_gives_an_editor_the_same_session_with_pi_harness_as_with_the_real_pi(tmp_path):
    real = run(tmp_path, "real")
    assert real["file"] == "hello\n" and real["stopReasons"] == ["end_turn", "cancelled", "end_turn"], real
    ours = run(tmp_path, "ours")
    differing = {key: {"real": real[key], "ours": ours[key]} for key in real if real[key] != ours[key]}
    assert differing == {}, json.dumps(differing, indent=1)


async def compact_a_short_session(home: PiHome) -> dict:
    async with AcpClient.spawn(["node", str(PI_ACP / "dist" / "index.js")], env=home.env,
                               cwd=str(home.cwd)) as client:
        await client.conn.initialize(protocol_version=1)
        sid = (await client.conn.new_session(cwd=str(home.cwd), mcp_servers=[])).session_id
        await client.conn.prompt(session_id=sid, prompt=[text_block("hello")])
        mark = len(client.updates)
        compact = await client.conn.prompt(session_id=sid, prompt=[text_block("/compact")])
        return {"stopReason": compact.stop_reason,
                "updates": collapse([normalise(u) for u in client.updates[mark:]])}


def test_pi_acp_compacts_a_session_shorter_than_keep_recent_tokens_as_the_real_pi_does(tmp_path):
    seen = {}
    for which in ("real", "ours"):
        with LlmServer() as server:
            server.push(Reply(text="Hi there."))
            server.default = Reply(text="## Goal\nShort summary.")
            home = PiHome(tmp_path / which, server, which, settings={"quietStartup": True})
            seen[which] = asyncio.run(asyncio.wait_for(compact_a_short_session(home), 120))
    assert seen["real"]["stopReason"] == "end_turn", seen
    texts = [u["text"] for u in seen["ours"]["updates"] if u["kind"] == "agent_message_chunk"]
    assert any(t.startswith("Compaction completed.") and "Short summary." in t for t in texts), seen
    assert seen["ours"] == seen["real"]


@pytest.mark.requires("pi16", "pi-acp34")
def test_pi_acp_034_gives_an_editor_the_same_session_with_pi_harness_as_with_pi16(tmp_path):
    """pi-acp 0.0.34 (which targets pi 1.x: it asks for the thinking levels, waits for
    ``agent_settled``) initializes, opens a session, prompts, cancels and lists commands
    against us as against pi 1.6."""
    from support.programs import NODE22, PI_ACP34

    real = run(tmp_path, "real16", PI_ACP34, str(NODE22))
    assert real["file"] == "hello\n" and real["stopReasons"] == ["end_turn", "cancelled", "end_turn"], real
    ours = run(tmp_path, "ours", PI_ACP34, str(NODE22))
    # pi 1.6 bundles two extensions of its own (/llama, /mcp); pi-harness has neither
    for update in real["commands"]:
        update["names"] = [n for n in update["names"] if n not in ("llama", "mcp")]
    differing = {key: {"real": real[key], "ours": ours[key]} for key in real if real[key] != ours[key]}
    assert differing == {}, json.dumps(differing, indent=1)
