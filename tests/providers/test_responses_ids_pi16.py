"""The ids pi 1.6 gives replayed assistant text that carries none of its own (another
provider's answer): ``msg_pi_<n>`` for a message's first text, ``msg_pi_<n>_<k>`` for the
ones after it, on the Responses API and Codex alike; compared with the input pi-ai 1.6's
own request builder makes for the same conversation."""

import json
import subprocess
from pathlib import Path

import pytest
from tests.providers.test_request_fields_pi16 import RESPONSES, our_body

HERE = Path(__file__).parent
USAGE = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


def _answer(*texts: str, provider: str = "anthropic") -> dict:
    return {"role": "assistant", "content": [{"type": "text", "text": t} for t in texts], "api": "anthropic-messages",
            "provider": provider, "model": "claude-x", "usage": USAGE, "stopReason": "stop", "timestamp": 2}


CONTEXT = {"systemPrompt": "Be brief.", "messages": [
    {"role": "user", "content": "Hi", "timestamp": 1}, _answer("One.", "Two.", "Three."),
    {"role": "user", "content": "And?", "timestamp": 3}, _answer("Four."),
    {"role": "user", "content": "Go on", "timestamp": 5}]}


def _ids(body: dict) -> list:
    return [item.get("id") for item in body["input"] if item.get("type") == "message"]


def test_replayed_text_without_an_id_gets_msg_pi_ids(llm_server):
    assert _ids(our_body(llm_server, RESPONSES, CONTEXT, {})) == ["msg_pi_1", "msg_pi_1_1", "msg_pi_1_2", "msg_pi_3"]


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_the_ids_are_pi16s(llm_server):
    from support.programs import PI16, node_for, require_real

    require_real("pi16")
    case = {"ids": {"model": {**RESPONSES, "baseUrl": "http://127.0.0.1:9/v1"}, "context": CONTEXT, "options": {}}}
    done = subprocess.run([node_for("pi16"), str(HERE / "pi16_payloads.mjs"), str(PI16.parent / "pi-ai")],
                          input=json.dumps(case), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    theirs = json.loads(done.stdout)["ids"]
    assert _ids(our_body(llm_server, RESPONSES, CONTEXT, {})) == _ids(theirs)
