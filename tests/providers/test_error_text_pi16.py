"""A failed request's error text, side by side with pi 1.6 on the scripted server: pi 1.6
says what its SDK says (completions ``503: {json}``, Anthropic ``503 {json}``, Responses
``local API error (503): {json}``, Google the body as JSON, Mistral ``Mistral API error
(503): <body>``; an error event in the stream: its message, Anthropic's event data as it
came, Google's ``got status: …``), and so do we, in the answer's ``errorMessage``."""

import json
import subprocess

import pytest

from support.llm_server import ANTHROPIC, COMPLETIONS, GOOGLE, MISTRAL, RESPONSES, Reply

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]


def _error_text(who: str, runner) -> list[str]:
    from support.programs import node_for, require_real

    command = ([node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js")] if who == "pi16"
               else runner.command()[:3])
    done = subprocess.run([*command, *runner.flags("--no-session", "--mode", "json", "-p", "hi")], cwd=runner.cwd,
                          env={**runner.env, "PI_OFFLINE": "1"}, capture_output=True, text=True, timeout=120)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return [e["message"].get("errorMessage") for e in events
            if e["type"] == "message_end" and e["message"]["role"] == "assistant"]


MID_STREAM = Reply(text="half an answer", error="broke mid-answer", error_type="overloaded_error")


@pytest.mark.parametrize("api", [COMPLETIONS, ANTHROPIC, RESPONSES, GOOGLE, MISTRAL])
@pytest.mark.parametrize("reply", [Reply(status=503, error="overloaded now", error_type="overloaded_error"),
                                   Reply(status=400, error="bad request here"), MID_STREAM],
                         ids=["503", "400", "mid-stream"])
def test_a_failed_requests_error_text_is_pi16s(pi, server, api, reply):
    if api == MISTRAL and reply is MID_STREAM:
        pytest.skip("the stand-in's error chunk is no Mistral event: pi 1.6 says only 'Invalid Mistral streaming event'")
    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", api, apiKey="test-key")))
    (pi.agent_dir / "settings.json").write_text(json.dumps({"retry": {"enabled": False}}))
    seen = {}
    for who in ("pi16", "ours"):
        server.push(reply)
        seen[who] = _error_text(who, pi)
    assert seen["ours"] == seen["pi16"]
    assert reply.error in seen["ours"][0]

