"""One sign-in serves both programs: an auth.json the real pi 0.73.1 wrote at its
sign-in is used and refreshed here, and ours is used (and refreshed) by pi.

pi has no setting that moves its sign-in and API origins, so it runs with
``node --import support/node/provider_origins.mjs``, which applies PI_PROVIDER_ORIGINS
to its fetch calls (origin only; pi's requests are otherwise its own)."""

import asyncio
import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.llm_server import Reply
from support.programs import node_for, require_real
from support.signin_server import SignInServer

from pi_plugins.models.auth import AuthStorage
from pi_plugins.signin.flows import SIGN_INS, AnthropicSignIn, LoginCallbacks

NODE = Path(__file__).parents[1] / "support" / "node"
MODEL = "anthropic/claude-sonnet-4-5"


def expire(path: Path, provider: str = "anthropic") -> dict:
    data = json.loads(path.read_text())
    data[provider]["expires"] = int(time.time() * 1000) - 1000
    path.write_text(json.dumps(data, indent=2))
    return data[provider]


def environment(tmp_path, agent_dir, origins):
    return {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), "PI_CODING_AGENT_DIR": str(agent_dir),
            "PI_OFFLINE": "1", "PI_PROVIDER_ORIGINS": origins}


@pytest.mark.process
@pytest.mark.requires("pi")
def test_pis_sign_in_is_used_and_refreshed_here(tmp_path, llm_server, callback_ports):
    package = require_real("pi")
    agent = tmp_path / "agent"
    agent.mkdir()
    with SignInServer() as server:
        env = environment(tmp_path, agent, server.origins({"https://api.anthropic.com": llm_server.url}))
        done = subprocess.run([node_for("pi"), "--import", str(NODE / "provider_origins.mjs"),
                               str(NODE / "pi_sign_in.mjs"), str(package), str(agent / "auth.json"), "anthropic"],
                              env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert stat.S_IMODE(os.stat(agent / "auth.json").st_mode) == 0o600
        theirs = expire(agent / "auth.json")
        assert list(theirs) == ["type", "refresh", "access", "expires"]
        llm_server.push(Reply(text="Signed in by pi."))
        ours = subprocess.run([sys.executable, "-m", "pi_plugins.cli", "--model", MODEL, "--no-session", "-p", "Hi"],
                              env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert ours.returncode == 0, ours.stderr
        assert ours.stdout.strip() == "Signed in by pi."
        refreshed = json.loads((agent / "auth.json").read_text())["anthropic"]
        assert server.refreshes == 1 and refreshed["refresh"] != theirs["refresh"]
        assert refreshed["access"] in str(llm_server.requests[0].headers)


@pytest.mark.process
@pytest.mark.requires("pi")
def test_our_sign_in_is_used_and_refreshed_by_pi(tmp_path, llm_server, monkeypatch):
    package = require_real("pi")
    agent = tmp_path / "agent"
    monkeypatch.setattr(AnthropicSignIn, "callback_port", 0)
    with SignInServer() as server:
        monkeypatch.setenv("PI_PROVIDER_ORIGINS", server.origins())
        links = []

        async def paste():
            import urllib.error
            import urllib.request

            while not links:
                await asyncio.sleep(0.01)

            class Stay(urllib.request.HTTPRedirectHandler):
                def redirect_request(self, *args, **kwargs):
                    return None
            try:
                await asyncio.to_thread(urllib.request.build_opener(Stay).open, links[0])
            except urllib.error.HTTPError as exc:
                return exc.headers["Location"]

        store = AuthStorage(agent / "auth.json", sign_ins=SIGN_INS)
        asyncio.run(store.login("anthropic", LoginCallbacks(on_auth=lambda url, _: links.append(url),
                                                            prompt=None, manual_code=paste)))
        ours = expire(agent / "auth.json")
        env = environment(tmp_path, agent, server.origins({"https://api.anthropic.com": llm_server.url}))
        llm_server.push(Reply(text="Signed in by pi-harness."))
        done = subprocess.run([node_for("pi"), "--import", str(NODE / "provider_origins.mjs"),
                               str(package / "dist" / "cli.js"), "--model", MODEL, "--no-session", "-p", "Hi"],
                              env=env, cwd=tmp_path, capture_output=True, text=True, timeout=90)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "Signed in by pi-harness."
        refreshed = json.loads((agent / "auth.json").read_text())["anthropic"]
        assert server.refreshes == 1 and refreshed["refresh"] != ours["refresh"]
        assert llm_server.requests[0].headers["authorization"] == f"Bearer {refreshed['access']}"


@pytest.mark.process
@pytest.mark.requires("pi")
def test_pi_harness_waits_for_pis_refresh_and_uses_its_token(tmp_path, llm_server):
    """The same lock: while pi holds auth.json.lock for its refresh, we wait, re-read and use
    pi's new token instead of refreshing again.

    pi goes first because pi reads auth.json at start-up under the same lock and gives up
    after about 200 ms (pi's own limit); started while we held the lock, pi would report
    no key, as a second pi would."""
    package = require_real("pi")
    agent = tmp_path / "agent"
    agent.mkdir()
    with SignInServer() as server:
        server.refresh_delay = 1.0  # we arrive while pi refreshes
        refresh = server.issue_refresh_token()
        (agent / "auth.json").write_text(json.dumps({"anthropic": {
            "type": "oauth", "refresh": refresh, "access": "sk-ant-oat01-old", "expires": 1}}, indent=2))
        os.chmod(agent / "auth.json", 0o600)
        env = environment(tmp_path, agent, server.origins({"https://api.anthropic.com": llm_server.url}))
        llm_server.push(Reply(text="answer"), Reply(text="answer"))

        def start(command):
            return subprocess.Popen(command + ["--model", MODEL, "--no-session", "-p", "Hi"], env=env, cwd=tmp_path,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        pi = start([node_for("pi"), "--import", str(NODE / "provider_origins.mjs"), str(package / "dist" / "cli.js")])
        assert server.refresh_arrived.wait(60), pi.communicate(timeout=5)
        ours = start([sys.executable, "-m", "pi_plugins.cli"])
        outputs = [run.communicate(timeout=90) for run in (pi, ours)]
        assert [pi.returncode, ours.returncode] == [0, 0], outputs
        assert [out.strip() for out, _ in outputs] == ["answer", "answer"]
        assert server.refreshes == 1
        token = json.loads((agent / "auth.json").read_text())["anthropic"]["access"]
        assert all(token in str(r.headers) for r in llm_server.requests) and len(llm_server.requests) == 2
