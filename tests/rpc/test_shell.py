"""bash and abort_bash: the user's own shell commands, and how their output reaches the
model."""

import json
import time
from pathlib import Path

from support.llm_server import Reply


def test_bash_runs_the_command_and_its_output_joins_the_next_prompt(rpc, server):
    result = rpc.ok("bash", command="echo from-the-shell; exit 3")
    assert result == {"output": "from-the-shell\n", "exitCode": 3, "cancelled": False, "truncated": False}
    [message] = rpc.ok("get_messages")["messages"]
    assert message["role"] == "bashExecution" and message["command"] == "echo from-the-shell; exit 3"
    others = [l for l in rpc.lines if l.get("type") not in ("response", "bash_execution_update")]
    assert not others, "bash emits only its output's updates (pi 1.6's bash_execution_update)"
    server.push(Reply(text="I see it."))
    rpc.ok("prompt", message="what did it print?")
    rpc.event("agent_end")
    sent = json.dumps(server.requests[0].body)
    assert "from-the-shell" in sent and "echo from-the-shell; exit 3" in sent


def test_long_output_is_cut_to_its_tail_and_kept_whole_in_a_file(rpc):
    result = rpc.ok("bash", command="seq 1 3000")
    assert result["truncated"] is True and result["exitCode"] == 0
    assert result["output"].rstrip().endswith("3000") and not result["output"].startswith("1\n")
    assert Path(result["fullOutputPath"]).read_text().splitlines() == [str(n) for n in range(1, 3001)]


def test_abort_bash_stops_the_running_command(rpc, gate):
    started = time.monotonic()
    command = rpc.send("bash", command=gate.tells("sleep 30"))
    gate.wait()
    assert rpc.ok("abort_bash") is None
    result = rpc.response_to(command)["data"]
    assert result["cancelled"] is True and "exitCode" not in result
    assert time.monotonic() - started < 10
    assert rpc.ok("get_messages")["messages"][-1]["cancelled"] is True
