"""pi 1.6's ``rawStopReason`` and ``usage.reasoning`` reach RPC's ``message_end`` and the
session file, from each wire format."""

import json

import pytest
from support.llm_server import ANTHROPIC, COMPLETIONS, GOOGLE, RESPONSES, Reply


@pytest.mark.parametrize("api, raw", [(COMPLETIONS, "stop"), (RESPONSES, "completed"),
                                      (ANTHROPIC, "end_turn"), (GOOGLE, "STOP")])
def test_raw_stop_reason_and_reasoning_tokens_reach_message_end_and_the_session_file(
        pi, server, start_rpc, api, raw):
    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", api)))
    server.push(Reply(thinking="Mull it over.", text="Answer.", usage={"output": 50, "reasoning": 20}))
    rpc = start_rpc()
    rpc.ok("prompt", message="hi")
    rpc.event("agent_end")
    ended = [l["message"] for l in rpc.events("message_end") if l["message"]["role"] == "assistant"][-1]
    assert ended["rawStopReason"] == raw
    assert ended["usage"]["reasoning"] == 20 and ended["usage"]["output"] == 50
    [session] = pi.sessions()
    saved = [json.loads(line)["message"] for line in session.read_text().splitlines()
             if '"role":"assistant"' in line][-1]
    assert (saved["rawStopReason"], saved["usage"]["reasoning"]) == (raw, 20)
    assert list(saved)[list(saved).index("rawStopReason") - 1] == "responseId"
