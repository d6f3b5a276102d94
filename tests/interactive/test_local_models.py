"""/model offers the models found on a local server when nothing is configured."""

import json
import os
import sys

import pytest

from support.llm_server import Reply
from support.local_servers import LocalServer
from support.terminal import Terminal


@pytest.mark.process
@pytest.mark.requires("tmux")
def test_model_selector_lists_the_models_found_on_a_local_server(tmp_path):
    cwd, agent_dir = tmp_path / "project", tmp_path / "agent"
    cwd.mkdir()
    agent_dir.mkdir()
    with LocalServer("ollama", ["qwen2.5-coder:0.5b", "llama3.2:1b"]) as ollama:
        (agent_dir / "settings.json").write_text(json.dumps({"localModels": {"endpoints": [ollama.url]}}))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
               "PI_CODING_AGENT_DIR": str(agent_dir), "TERM": "xterm-256color", "LANG": "C.UTF-8",
               "SHELL": "/bin/sh", "PYTHONUNBUFFERED": "1"}
        ollama.push(Reply(text="Answered by llama."))
        with Terminal(tmp_path, [sys.executable, "-m", "pi_plugins.cli"], env=env, cwd=cwd,
                      width=100, height=40) as term:
            term.wait_for("(auto)", timeout=20)
            term.type("/model")
            term.press("Enter")
            dialog = term.wait_for("Select a model")
            assert "→ qwen2.5-coder:0.5b [ollama] ✓" in dialog and "llama3.2:1b [ollama]" in dialog
            term.type("3.2")
            term.wait_for(lambda s: "→ llama3.2:1b [ollama]" in s)
            term.press("Enter")
            term.wait_for("Model: ollama/llama3.2:1b")
            term.type("hello")
            term.press("Enter")
            term.wait_for("Answered by llama.")
        assert ollama.requests[-1].body["model"] == "llama3.2:1b"
