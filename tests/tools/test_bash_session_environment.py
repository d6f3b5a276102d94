"""The bash tool's environment as pi 1.6 sets it (docs/environment-variables.md):
``PI_CODING_AGENT``, ``AI_AGENT`` and the session's ``PI_*`` variables, side by side
with the real pi 1.6; keys stay out."""

import json
import subprocess
import sys

import pytest

from support.llm_server import Reply

pytestmark = pytest.mark.process

NAMES = ("PI_CODING_AGENT", "AI_AGENT", "PI_PROVIDER", "PI_MODEL", "PI_REASONING_LEVEL")
SCRIPT = ("for v in " + " ".join(NAMES) + " PI_SESSION_ID PI_SESSION_FILE; do "
          "eval echo $v=\\${$v}; done; echo KEY=${LEAKY_API_KEY:-none}")


def _bash_output(runner, server, command, session_args):
    server.push(Reply(tool_calls=[("bash", {"command": SCRIPT})]), Reply(text="done"))
    done = subprocess.run([*command, "--model", "local/deep", "--thinking", "high", *session_args, "-p", "Go"],
                          cwd=runner.cwd, env={**runner.env, "PI_OFFLINE": "1", "LEAKY_API_KEY": "sk-leak",
                                               "PI_SESSION_ID": "inherited"},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    tool_message = next(m for m in reversed(server.requests[-1].body["messages"]) if m["role"] == "tool")
    text = tool_message["content"] if isinstance(tool_message["content"], str) else \
        "".join(part["text"] for part in tool_message["content"])
    return dict(line.split("=", 1) for line in text.strip().splitlines() if "=" in line)


@pytest.mark.requires("pi16")
def test_bash_commands_see_the_same_pi_variables_as_under_pi16(pi, server):
    from support.programs import node_for, require_real

    models = server.models_json("local", apiKey="test-key", models=[
        {"id": "deep", "reasoning": True}])
    (pi.agent_dir / "models.json").write_text(json.dumps(models))
    theirs = _bash_output(pi, server, [node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js")], [])
    ours = _bash_output(pi, server, [sys.executable, "-m", "pi_plugins.cli"], [])
    assert {n: ours[n] for n in NAMES} == {n: theirs[n] for n in NAMES} == {
        "PI_CODING_AGENT": "true", "AI_AGENT": "pi", "PI_PROVIDER": "local", "PI_MODEL": "deep",
        "PI_REASONING_LEVEL": "high"}
    for found in (ours, theirs):  # this run's session, never the inherited one
        assert found["PI_SESSION_ID"] not in ("", "inherited")
        assert found["PI_SESSION_FILE"].endswith(".jsonl") and found["PI_SESSION_ID"] in found["PI_SESSION_FILE"]
    assert ours["KEY"] == "none"


def test_an_unsaved_session_has_an_id_but_no_file(pi, server):
    models = server.models_json("local", models=[{"id": "deep", "reasoning": True}])
    (pi.agent_dir / "models.json").write_text(json.dumps(models))
    found = _bash_output(pi, server, [sys.executable, "-m", "pi_plugins.cli"], ["--no-session"])
    assert found["PI_SESSION_ID"] not in ("", "inherited") and found["PI_SESSION_FILE"] == ""
