"""``pi serve`` and ``pi connect`` as real processes: the one line printed, the token's
sources, the end on SIGINT/SIGTERM, the bridge, and pi's own RpcClient through it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.llm_server import Reply
from support.programs import REAL_PI
from support.real_clients import PiHome
from support.serve_process import ServeProcess

pytestmark = pytest.mark.process
HERE = Path(__file__).parent


def test_serve_prints_one_line_and_a_signal_ends_it_with_0_after_aborting_the_run(pi, server, tmp_path):
    server.push(Reply(tool_calls=[("bash", {"command": f"echo $$ > {tmp_path}/pid; sleep 60"})]))
    served = ServeProcess(pi, env={"PI_SERVE_TOKEN": "from-the-environment"})
    assert served.token == "from-the-environment"
    session = served.open(pi)
    bridge = subprocess.Popen([sys.executable, "-m", "pi_plugins.cli", "connect", served.base, "--session", session],
                              env={**pi.env, "PI_SERVE_TOKEN": "from-the-environment"}, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    bridge.stdin.write(json.dumps({"id": "p", "type": "prompt", "message": "sleep"}) + "\n")
    bridge.stdin.flush()
    for line in bridge.stdout:
        if json.loads(line).get("type") == "tool_execution_start":
            break
    deadline = time.monotonic() + 10
    while not (tmp_path / "pid").exists() or not (tmp_path / "pid").read_text().strip():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    child = int((tmp_path / "pid").read_text())
    code, out, err = served.stop(signal.SIGTERM)
    assert code == 0 and out == "", err
    assert "from-the-environment" not in err
    with pytest.raises(ProcessLookupError):  # the tool's process was stopped with the run
        os.kill(child, 0)
    bridge.wait(10)
    lines = [json.loads(l) for l in open(pi.sessions()[0])]
    assert lines[0]["id"] == session and any(l.get("message", {}).get("role") == "assistant" for l in lines)


def test_the_token_is_kept_in_a_private_file_and_a_token_flag_is_refused(pi):
    refused = subprocess.run([sys.executable, "-m", "pi_plugins.cli", "serve", "--port", "0", "--token", "argv-token"],
                             cwd=pi.cwd, env=pi.env, capture_output=True, text=True, timeout=30)
    assert refused.returncode == 2 and "--token refused" in refused.stderr and "PI_SERVE_TOKEN" in refused.stderr
    assert "argv-token" not in refused.stderr + refused.stdout
    from_env = ServeProcess(pi, env={"PI_SERVE_TOKEN": "env-token-0123456789"})
    assert from_env.token == "env-token-0123456789" and from_env.stop(signal.SIGINT)[0] == 0
    kept = pi.agent_dir / "serve-token"
    assert not kept.exists()  # an environment's token is its owner's to keep
    tokens = []
    for _ in range(2):
        served = ServeProcess(pi)
        tokens.append(served.token)
        assert served.http.get("/api/sessions").status_code == 200
        code, out, err = served.stop()
        assert code == 0 and served.token not in err + out  # it appears only in the one line
    assert tokens[0] == tokens[1] == kept.read_text().strip()  # an open page reconnects after a restart
    assert len(tokens[0]) >= 43 and os.stat(kept).st_mode & 0o777 == 0o600  # 256 bits, the user's alone
    os.chmod(kept, 0o644)  # readable by others: never used again
    served = ServeProcess(pi)
    assert served.token != tokens[0] and os.stat(kept).st_mode & 0o777 == 0o600
    code, _, err = served.stop()
    assert code == 0 and "replaced with a new token" in err


def test_connect_bridges_a_served_session_beside_another_client(pi, server):
    from websockets.sync.client import connect

    server.push(Reply(text="Seen by both clients. " * 3, delta_size=5, delay=0.01))
    served = ServeProcess(pi)
    session = served.open(pi)
    with connect(f"ws://127.0.0.1:{served.port}/api/sessions/{session}/rpc?token={served.token}") as watcher:
        feeder = subprocess.Popen([sys.executable, "-m", "pi_plugins.cli", "connect", served.base, "--session", session],
                                  env=pi.env, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)  # the file's token
        feeder.stdin.write(json.dumps({"id": "p", "type": "prompt", "message": "hi"}) + "\n")
        feeder.stdin.flush()
        seen_by_bridge = []
        for line in feeder.stdout:
            frame = json.loads(line)
            seen_by_bridge.append(frame)
            if frame.get("type") == "agent_end":
                break
        feeder.stdin.close()
        assert feeder.wait(10) == 0
        seen_by_watcher = []
        while not seen_by_watcher or seen_by_watcher[-1]["type"] != "agent_end":
            seen_by_watcher.append(json.loads(watcher.recv(timeout=10)))
    assert seen_by_bridge[0] == {"id": "p", "type": "response", "command": "prompt", "success": True,
                                 "data": {"disposition": "started"}}  # pi 1.6's
    assert seen_by_bridge[1:] == seen_by_watcher
    assert served.stop()[0] == 0


def test_connect_says_why_it_cannot_attach(pi):
    served = ServeProcess(pi, env={"PI_SERVE_TOKEN": "env-token-0123456789"})  # no token file
    url = served.base + "/#token=wrong"
    refused = subprocess.run([sys.executable, "-m", "pi_plugins.cli", "connect", url, "--session", "x"],
                             env=pi.env, capture_output=True, text=True, input="", timeout=30)
    assert refused.returncode == 1 and "refused the connection (401" in refused.stderr
    assert "readable by every user of this machine" in refused.stderr  # a token in argv is warned about
    no_token = subprocess.run([sys.executable, "-m", "pi_plugins.cli", "connect", served.base, "--session", "x"],
                              env=pi.env, capture_output=True, text=True, input="", timeout=30)
    assert no_token.returncode == 1 and "no token" in no_token.stderr
    flag = subprocess.run([sys.executable, "-m", "pi_plugins.cli", "connect", served.base, "--session", "x",
                           "--token", "argv-token"], env=pi.env, capture_output=True, text=True, input="", timeout=30)
    assert flag.returncode == 2 and "--token refused" in flag.stderr
    served.stop()


def test_a_host_other_machines_reach_is_refused_without_allow_remote_and_warned_about_with_it(pi):
    refused = subprocess.run([sys.executable, "-m", "pi_plugins.cli", "serve", "--port", "0", "--host", "0.0.0.0"],
                             cwd=pi.cwd, env=pi.env, capture_output=True, text=True, timeout=30)
    assert refused.returncode == 2 and "--allow-remote" in refused.stderr and refused.stdout == ""
    served = ServeProcess(pi, "--host", "0.0.0.0", "--allow-remote", host="0.0.0.0")
    assert served.http.get("/api/health").status_code == 200
    code, _, err = served.stop()
    assert code == 0 and "warning: listening on 0.0.0.0, reachable from other machines" in err


def _command_lines() -> str:
    """Every process's arguments, as any user of the machine reads them."""
    return subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True).stdout


def test_the_token_is_on_no_command_line_and_never_reaches_the_model(pi, server):
    # the token file is read last: on a busy machine the process list outgrows the tool's
    # output limit, which keeps the tail
    spy = ("tr '\\0' ' ' < /proc/$PPID/cmdline; echo; tr '\\0' '\\n' < /proc/$PPID/environ; env; "
           f"for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done; cat {pi.agent_dir}/serve-token")
    server.push(Reply(tool_calls=[("bash", {"command": spy})]), Reply(text="Seen."))
    served = ServeProcess(pi)
    session = served.open(pi)
    bridge = subprocess.Popen([sys.executable, "-m", "pi_plugins.cli", "connect", served.base, "--session", session],
                              env=pi.env, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert served.token not in _command_lines()
        bridge.stdin.write(json.dumps({"id": "p", "type": "prompt", "message": "look around"}) + "\n")
        bridge.stdin.flush()
        ends = []
        for line in bridge.stdout:
            frame = json.loads(line)
            if frame.get("type") == "tool_execution_end":
                ends.append(frame)
            if frame.get("type") == "agent_end":
                break
        assert served.token not in _command_lines()  # while both run, mid-session
    finally:
        bridge.stdin.close()
        bridge.wait(10)
    output = json.dumps(ends)
    assert "[redacted: PI_SERVE_TOKEN]" in output  # the token file's content, read by the tool
    requests = server.wait_for_requests(2)
    assert len(requests) == 2
    assert all(served.token not in r.raw.decode("utf-8", "replace") for r in requests)
    assert served.token not in pi.sessions()[0].read_text()
    assert served.stop()[0] == 0


@pytest.mark.requires("pi")
def test_pis_own_rpc_client_drives_a_served_session_through_connect(tmp_path, server):
    home = PiHome(tmp_path, server, "ours")
    server.push(Reply(text="Answer through the bridge."))
    served = ServeProcess(home, env=home.env)
    session = served.open(home)
    env = {**home.env, "PI_CONNECT_URL": served.base, "PI_CONNECT_SESSION": session}
    out = subprocess.run(["node", str(HERE / "node" / "rpc_client_connect.mjs"), str(REAL_PI),
                          str(HERE / "node" / "pi_connect.mjs"), str(home.cwd)],
                         cwd=home.cwd, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result == {
        "state": {"model": "local/test-model", "sessionId": session, "isStreaming": False},
        "events": ["agent_start", "turn_start", "message_start", "message_end",  # pi 1.6's system message
                   "message_start", "message_end", "message_start", "message_end", "turn_end", "agent_end"],
        "seqs": True, "lastText": "Answer through the bridge.", "messages": ["system", "user", "assistant"],
    }
    assert served.stop()[0] == 0


@pytest.mark.requires("pi-acp")
def test_an_editor_through_pi_acp_drives_a_served_session_beside_another_client(tmp_path, server):
    import asyncio

    from acp import text_block
    from support.acp_client import AcpClient
    from support.programs import PI_ACP
    from websockets.sync.client import connect

    home = PiHome(tmp_path, server, "ours")
    server.push(Reply(text="Answer for the editor."))
    served = ServeProcess(home, env=home.env)
    session = served.open(home)
    # pi-acp starts `pi --mode rpc ...` from PATH: this `pi` attaches to the served session
    launcher = home.bin / "pi"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m pi_plugins.cli connect "{served.base}" '
                        f'--session {session}\n')

    async def editor() -> list[str]:
        async with AcpClient.spawn(["node", str(PI_ACP / "dist" / "index.js")], env=home.env,
                                   cwd=str(home.cwd)) as client:
            await client.conn.initialize(protocol_version=1)
            acp_session = await client.conn.new_session(cwd=str(home.cwd), mcp_servers=[])
            await client.conn.prompt(session_id=acp_session.session_id, prompt=[text_block("hello editor")])
            return [u["content"]["text"] for u in client.updates if u["sessionUpdate"] == "agent_message_chunk"]

    with connect(f"ws://127.0.0.1:{served.port}/api/sessions/{session}/rpc?token={served.token}") as watcher:
        chunks = asyncio.run(editor())
        seen = []
        while not seen or seen[-1]["type"] != "agent_end":
            seen.append(json.loads(watcher.recv(timeout=10)))
    assert "".join(chunks).strip() == "Answer for the editor."
    ends = [f["message"] for f in seen if f["type"] == "message_end"]
    assert [m["role"] for m in ends] == ["system", "user", "assistant"]  # pi 1.6's system message first
    [user] = [m for m in ends if m["role"] == "user"]
    assert user["content"][0]["text"] == "hello editor"
    assert served.stop()[0] == 0
