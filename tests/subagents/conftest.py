import pytest


@pytest.fixture
def agent_home(tmp_path, monkeypatch):
    home = tmp_path / "agent"
    home.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(home))
    return home
