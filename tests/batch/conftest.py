import json

import pytest


@pytest.fixture
def home(tmp_path, server, monkeypatch):
    """An agent dir whose models.json serves ``local/test-model`` from the server, and a
    project folder for the tasks."""
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "models.json").write_text(json.dumps(server.models_json("local")))
    (tmp_path / "project").mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    return agent
