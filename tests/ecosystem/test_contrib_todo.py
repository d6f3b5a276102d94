"""Issue 9's promise: after installing the project, ``pi install ./contrib/pi-todo``
gives the model a ``todo`` tool on the next run, with no configuration."""

import json
import shutil
from pathlib import Path

import pytest

from support.llm_server import LlmServer, Reply

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)

ROOT = Path(__file__).parents[2]


def test_pi_install_contrib_todo_gives_the_next_run_a_todo_tool(plugin_env):
    shutil.copytree(ROOT / "contrib" / "pi-todo", plugin_env.cwd / "pi-todo",
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    out = plugin_env.pi("install", "./pi-todo", "--no-build-isolation")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Installed pi-todo" in out.stdout and "plugins todo" in out.stdout
    assert "todo" in plugin_env.tools()

    with LlmServer() as server:
        (plugin_env.agent_dir / "models.json").write_text(json.dumps(server.models_json("local")))
        server.push(Reply(tool_calls=[("todo", {"action": "add", "text": "write the report"})]),
                    Reply(text="Added it."))
        out = plugin_env.pi("--model", "local/test-model", "-p", "Remember to write the report")
        assert out.returncode == 0, out.stderr
        offered = [t["function"]["name"] for t in server.requests[0].body["tools"]]
        assert "todo" in offered
        result = server.requests[1].body["messages"][-1]
        assert result["role"] == "tool" and "write the report" in json.dumps(result)
