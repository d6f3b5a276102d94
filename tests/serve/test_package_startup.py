"""``pi serve`` serves at once and installs the pi packages settings.json lists but the
disk lacks in the background: the page and the sessions work meanwhile (without the
package's resources, and told so), the install's result is said on stderr, and the
sessions opened after it have the package's skills as ``pi -p`` would."""

import json
import time

import pytest

from support.cli import use_environment
from support.llm_server import Reply
from support.npm_registry import NpmRegistry

from .conftest import Served

PACKAGE = "npm:pi-prompt-template-model"
SKILL = "<name>prompt-template-authoring</name>"


@pytest.fixture
def registry():
    with NpmRegistry() as running:
        yield running


def system_prompt(server) -> str:
    system = server.requests[-1].body["messages"][0]["content"]
    return system if isinstance(system, str) else "".join(part["text"] for part in system)


def ask(served, server, said: list | None = None) -> str:
    """The system prompt of a new session's first request (``said``: gets its frames)."""
    server.push(Reply(text="ok"))
    client = served.socket(served.open())
    client.ok("prompt", message="Hi")
    client.event("agent_end")
    if said is not None:
        said += client.frames
    return system_prompt(server)


def test_pi_serve_serves_while_a_missing_package_installs_and_later_sessions_have_it(
        pi, registry, server, monkeypatch, capfd):
    (pi.agent_dir / "settings.json").write_text(json.dumps({"packages": [PACKAGE]}))
    use_environment(monkeypatch, {**pi.env, "npm_config_registry": registry.url}, pi.cwd)
    package = pi.agent_dir / "npm" / "node_modules" / "pi-prompt-template-model"
    registry.open.clear()  # the tarball download hangs until the test lets it go
    served = Served(pi)
    try:
        assert served.http.get("/").status_code == 200  # serving, the install under way
        said: list = []
        assert SKILL not in ask(served, server, said)  # a session meanwhile: no waiting, no skill
        assert f"package {PACKAGE} is being installed; sessions started after it have its resources" \
            in json.dumps(said)
        assert not package.exists()
        registry.open.set()
        deadline = time.monotonic() + 30
        while not served.serving.sessions.checks == set() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (package / "skills" / "prompt-template-authoring" / "SKILL.md").is_file()
        assert SKILL in ask(served, server)  # a session after: the package's skill
    finally:
        registry.open.set()
        served.stop()
    err = capfd.readouterr().err
    assert f"Installing {PACKAGE}...\n" in err
    assert f"pi serve: start-up checks for {pi.cwd} done in " in err
    assert "(0 warnings); sessions opened from now on have the packages they installed\n" in err


def test_a_package_that_cannot_be_installed_is_said_on_stderr_and_serving_goes_on(
        pi, registry, server, monkeypatch, capfd):
    (pi.agent_dir / "settings.json").write_text(json.dumps({"packages": ["npm:no-such-package"]}))
    use_environment(monkeypatch, {**pi.env, "npm_config_registry": registry.url}, pi.cwd)
    served = Served(pi)
    try:
        deadline = time.monotonic() + 30
        while served.serving.sessions.checks and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "<available_skills>" not in ask(served, server)
    finally:
        served.stop()
    err = capfd.readouterr().err
    assert 'pi serve: warning: Extension package "npm:no-such-package": failed to install (npm package ' \
           "no-such-package not found" in err
    assert "(1 warning); sessions opened from now on" in err
