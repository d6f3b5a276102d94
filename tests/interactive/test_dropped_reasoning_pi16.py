"""pi 1.6's "OpenAI dropped N reasoning items" notice: a Responses server that says in its
``response.completed`` (``input_transformations``) that it removed reasoning items from the
request's input gets them kept in the answer's ``diagnostics`` (``turn_boundary`` removals
left out), as pi 1.6 keeps them (side by side), and the chat says so under
``showCacheMissNotices``."""

from __future__ import annotations

import json
import subprocess

import pytest
from support.llm_server import RESPONSES, Reply, render

REMOVED = [
    {"type": "reasoning", "id": "rs_1", "action": "removed", "reason": "encrypted_content_invalid"},
    {"type": "reasoning", "id": "rs_2", "action": "removed", "reason": "turn_boundary"},  # left out
    {"type": "reasoning", "id": "rs_3", "action": "kept", "reason": "other"},  # not a removal
    {"type": "message", "id": "msg_1", "action": "removed", "reason": "other"},  # not reasoning
    {"type": "reasoning", "id": "rs_4", "action": "removed", "reason": "expired", "extra": 1},
]


def _with_removals(text: str, model: str = "test-model") -> Reply:
    """A Responses answer whose closing event reports :data:`REMOVED`."""
    events = render(RESPONSES, Reply(text=text), model, 1)
    head, data = events[-1].rsplit("data: ", 1)
    completed = json.loads(data)
    completed["response"]["input_transformations"] = REMOVED
    return Reply(raw="".join(events[:-1]) + f"{head}data: {json.dumps(completed)}\n\n")


def _diagnostics(who: str, runner) -> list:
    from support.programs import node_for, require_real

    command = ([node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js")] if who == "pi16"
               else runner.command()[:3])
    done = subprocess.run([*command, *runner.flags("--no-session", "--mode", "json", "-p", "hi")], cwd=runner.cwd,
                          env={**runner.env, "PI_OFFLINE": "1"}, capture_output=True, text=True, timeout=120)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    [answer] = [e["message"] for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
    assert answer["stopReason"] == "stop", done.stderr
    for diagnostic in answer.get("diagnostics", []):
        assert isinstance(diagnostic.pop("timestamp"), int)
    return answer.get("diagnostics", [])


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_removed_reasoning_items_are_kept_in_the_answers_diagnostics_as_pi16_keeps_them(pi, server):
    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", RESPONSES, apiKey="test-key")))
    seen = {}
    for who in ("pi16", "ours"):
        server.push(_with_removals("Fine."))
        seen[who] = _diagnostics(who, pi)
    assert seen["ours"] == seen["pi16"]
    assert seen["ours"] == [{"type": "openai_input_transformations", "details": {"transformations": [
        {"type": "reasoning", "id": "rs_1", "action": "removed", "reason": "encrypted_content_invalid"},
        {"type": "reasoning", "id": "rs_4", "action": "removed", "reason": "expired"}]}}]


def test_the_chat_says_openai_dropped_reasoning_items(pi_screen, server):
    models = server.models_json("local", RESPONSES, models=[{"id": "test-model", "reasoning": True}])
    server.push(_with_removals("Fine, answered."))
    term = pi_screen(settings={"showCacheMissNotices": True}, agent_files={"models.json": json.dumps(models)})
    term.submit("hi")
    screen = term.wait_drawn("(details in session)")
    assert "OpenAI dropped 2 reasoning items: encrypted_content_invalid, expired (details in session)" in screen
    assert screen.index("Fine, answered.") < screen.index("OpenAI dropped")
