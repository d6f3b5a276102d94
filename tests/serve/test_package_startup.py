"""``pi serve`` installs the pi packages settings.json lists but the disk lacks when it
opens a session (the one assembly asks ``settings_problems``, as ``pi`` does at start-up),
so a served session has the package's skills as ``pi -p`` would."""

import json

import pytest

from support.cli import use_environment
from support.llm_server import Reply
from support.npm_registry import NpmRegistry

from .conftest import Served


@pytest.fixture
def registry():
    with NpmRegistry() as running:
        yield running


def test_pi_serve_installs_a_missing_package_when_it_opens_a_session(pi, registry, server, monkeypatch):
    (pi.agent_dir / "settings.json").write_text(json.dumps({"packages": ["npm:pi-prompt-template-model"]}))
    use_environment(monkeypatch, {**pi.env, "npm_config_registry": registry.url}, pi.cwd)
    served = Served(pi)
    try:
        server.push(Reply(text="ok"))
        session = served.open()
        client = served.socket(session)
        client.ok("prompt", message="Hi")
        client.event("agent_end")
    finally:
        served.stop()
    package = pi.agent_dir / "npm" / "node_modules" / "pi-prompt-template-model"
    assert (package / "skills" / "prompt-template-authoring" / "SKILL.md").is_file()
    system = server.requests[-1].body["messages"][0]["content"]
    system = system if isinstance(system, str) else "".join(part["text"] for part in system)
    assert "<name>prompt-template-authoring</name>" in system
