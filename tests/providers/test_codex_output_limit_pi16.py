"""Codex's request side by side with pi 1.6 on the scripted server: the same fields and
the model's whole output limit as ``max_output_tokens`` (pi 1.6 sends it; 0.73.1 sent
none). Both compress the body with zstd; the scripted server reads it back. The rest of
the request side by side: ``test_codex_request_pi16.py``."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.llm_server import Reply

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]
SKIP = ("input", "prompt_cache_key")  # each program's own prompt and tool words; the session


def test_codex_gets_the_models_output_limit_as_pi16_sends_it(tmp_path, llm_server):
    from support.programs import node_for, require_real
    from support.signin_server import fake_jwt

    token = fake_jwt({"https://api.openai.com/auth": {"chatgpt_account_id": "acct-123"}})
    bodies = {}
    for who in ("pi16", "ours"):
        agent, cwd = tmp_path / who / "agent", tmp_path / who / "project"
        agent.mkdir(parents=True)
        cwd.mkdir(parents=True)
        (agent / "auth.json").write_text(json.dumps({"openai-codex": {
            "type": "oauth", "access": token, "refresh": "r", "expires": 9_999_999_999_999, "accountId": "acct-123"}}))
        (agent / "models.json").write_text(json.dumps(
            {"providers": {"openai-codex": {"baseUrl": f"{llm_server.url}/backend-api"}}}))
        (agent / "settings.json").write_text(json.dumps({"transport": "sse"}))
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / who / "home"), "PI_OFFLINE": "1",
               "PI_CODING_AGENT_DIR": str(agent)}
        command = ([node_for("pi16"), str(Path(require_real("pi16")) / "dist" / "cli.js")] if who == "pi16"
                   else [sys.executable, "-m", "pi_plugins.cli"])
        llm_server.push(Reply(text="ok"))
        done = subprocess.run([*command, "--model", "openai-codex/gpt-5.6-luna", "--no-session", "-p", "Hi"],
                              cwd=cwd, env=env, capture_output=True, text=True, timeout=90)
        assert done.returncode == 0 and done.stdout.strip() == "ok", f"{who}: {done.stderr}"
        bodies[who] = [r for r in llm_server.requests if r.method == "POST"][-1].body
    pi, ours = bodies["pi16"], bodies["ours"]
    assert ours["max_output_tokens"] == pi["max_output_tokens"] == 128000
    assert {k: v for k, v in ours.items() if k not in SKIP} == {k: v for k, v in pi.items() if k not in SKIP}
    assert list(ours) == list(pi)
