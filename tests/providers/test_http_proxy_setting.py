"""pi 1.6's ``httpProxy`` setting and the proxy variables: the model's requests go
through a proxy on 127.0.0.1 (real sockets), side by side with the real pi 1.6. The
setting counts only in the agent directory's settings.json, and a variable the
environment already sets wins over it, as in pi."""

import json
import subprocess

import pytest

from support.http_proxy import HttpProxy
from support.llm_server import Reply

pytestmark = pytest.mark.process


def _pi16(runner, *args, env=None):
    from support.programs import node_for, require_real

    return subprocess.run([node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js"), *runner.flags(*args)],
                          cwd=runner.cwd, env={**runner.env, "PI_OFFLINE": "1", **(env or {})},
                          capture_output=True, text=True, timeout=120)


def _ours(runner, *args, env=None):
    return subprocess.run(runner.command(*args), cwd=runner.cwd, env={**runner.env, **(env or {})},
                          capture_output=True, text=True, timeout=120)


def _server_target(server) -> str:
    return server.url.removeprefix("http://")


def _use_key(pi, server):  # pi 1.6 wants a key for a models.json provider
    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))


@pytest.mark.requires("pi16")
def test_http_proxy_in_the_agent_settings_carries_the_models_requests_as_in_pi16(pi, server):
    _use_key(pi, server)
    with HttpProxy() as proxy:
        (pi.agent_dir / "settings.json").write_text(json.dumps({"httpProxy": proxy.url}))
        server.push(Reply(text="via proxy"), Reply(text="via proxy"))
        theirs, ours = _pi16(pi, "-p", "hi"), _ours(pi, "-p", "hi")
        assert (theirs.stdout, ours.stdout) == ("via proxy\n", "via proxy\n"), (theirs.stderr, ours.stderr)
        targets = [target for _method, target in proxy.seen]
    target = _server_target(server)
    assert targets[0] == target  # pi 1.6 tunnels (CONNECT host:port) ...
    assert targets[1].startswith(f"http://{target}/")  # ... ours forwards the absolute URL
    assert len(server.requests) == 2


def test_a_proxy_variable_already_set_wins_over_the_setting(pi, server):
    with HttpProxy() as setting_proxy, HttpProxy() as env_proxy:
        (pi.agent_dir / "settings.json").write_text(json.dumps({"httpProxy": setting_proxy.url}))
        server.push(Reply(text="ok"))
        done = _ours(pi, "-p", "hi", env={"HTTP_PROXY": env_proxy.url})
        assert done.stdout == "ok\n", done.stderr
        assert len(env_proxy.seen) == 1 and setting_proxy.seen == []


def test_http_proxy_in_a_projects_settings_is_ignored(pi, server):
    pi.trust_project()
    with HttpProxy() as proxy:
        (pi.cwd / ".pi").mkdir()
        (pi.cwd / ".pi" / "settings.json").write_text(json.dumps({"httpProxy": proxy.url}))
        server.push(Reply(text="direct"))
        done = _ours(pi, "-p", "hi")
        assert done.stdout == "direct\n", done.stderr
        assert proxy.seen == []
