"""``--model ID`` where several providers have that id: pi 1.6 takes the one provider
signed in (or given a key) and stops, in its words and with its exit code, when none or
more than one is. Run side by side with pi 1.6 on the same homes and keys."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.programs import node_for, require_real
from support.side_by_side import requests_of_both

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]


def refusal(tmp_path: Path, who: str, model: str, env: dict) -> tuple[int, str]:
    """(exit code, the ``Error:`` line) of ``pi --model MODEL -p Hi`` in a fresh home."""
    home = tmp_path / who
    home.mkdir(parents=True, exist_ok=True)
    command = ([node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js")] if who == "pi16"
               else [sys.executable, "-m", "pi_plugins.cli"])
    done = subprocess.run([*command, "--model", model, "--no-session", "-p", "Hi"], cwd=home, capture_output=True,
                          text=True, timeout=90, env={"PATH": os.environ["PATH"], "HOME": str(home), "PI_OFFLINE": "1",
                                                      "PI_CODING_AGENT_DIR": str(home / "agent"), **env})
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    return done.returncode, errors[-1] if errors else done.stderr


@pytest.mark.parametrize("model,env", [
    ("claude-sonnet-4-5", {}),
    ("gpt-4.1", {"ANTHROPIC_API_KEY": "a"}),
    ("claude-sonnet-4-5:high", {"ANTHROPIC_API_KEY": "a", "OPENCODE_API_KEY": "o"}),
    ("sonnet-4-5", {"ANTHROPIC_API_KEY": "a", "OPENCODE_API_KEY": "o"}),
])
def test_an_id_no_or_several_signed_in_providers_have_stops_as_pi_16_does(tmp_path, model, env):
    theirs = refusal(tmp_path, "pi16", model, env)
    ours = refusal(tmp_path, "ours", model, env)
    assert theirs[0] == 1 and "is ambiguous across providers" in theirs[1]
    assert ours == theirs


@pytest.mark.parametrize("model,key,origin", [
    ("claude-sonnet-4-5", "ANTHROPIC_API_KEY", "https://api.anthropic.com"),
    ("sonnet-4-5", "OPENCODE_API_KEY", "https://opencode.ai"),
])
def test_the_one_signed_in_provider_gets_the_request(tmp_path, llm_server, model, key, origin):
    pi, ours = requests_of_both(tmp_path, llm_server, model, real="pi16", env={key: "k"},
                                origins={origin: llm_server.url})
    assert (ours.path, ours.body["model"]) == (pi.path, pi.body["model"])
    assert ours.body["model"] == "claude-sonnet-4-5"
