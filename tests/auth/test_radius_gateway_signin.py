"""A Radius gateway of one's own in models.json (``"oauth": "radius"``) signs in at that
gateway, under its own provider name and ``name``, and refreshes there too (pi 1.6 makes
each such provider a Radius of its own); taken out of models.json, it is no longer
listed even though its stored catalogue stays in models-store.json (as pi 1.6)."""

import asyncio
import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from support.signin16_server import Signin16Server

import pi_plugins.signin as signin_plugin
from pi_plugins.providers.catalogue import builtin_models
from pi_plugins.signin import device_code
from pi_plugins.signin.common import auth_storage, display_name, known_providers, sign_ins
from pi_plugins.signin.flows import LoginCallbacks


@pytest.fixture(autouse=True)
def quick_polls(monkeypatch):
    monkeypatch.setattr(device_code, "MINIMUM_INTERVAL", 0.01)


@pytest.fixture
def gateway(monkeypatch):
    """The gateway's stand-in; radius.pi.dev and ``PI_RADIUS_GATEWAY`` lead nowhere, so a
    sign-in that asked them instead would fail."""
    with Signin16Server() as server:
        monkeypatch.delenv("PI_PROVIDER_ORIGINS", raising=False)
        monkeypatch.setenv("PI_RADIUS_GATEWAY", "http://127.0.0.1:9")
        yield server


def write_models_json(agent: Path, providers: dict) -> None:
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "models.json").write_text(json.dumps({"providers": providers}))


def gateway_config(server) -> dict:
    return {"my-radius": {"baseUrl": f"{server.url}/v1", "oauth": "radius", "name": "My Radius"}}


def device_login(select_answer="device-code"):
    shown, asked = [], []

    async def select(message, options):
        asked.append(message)
        return select_answer

    async def no_prompt(*args):
        raise AssertionError("nothing is pasted in a device-code sign-in")

    callbacks = LoginCallbacks(on_auth=lambda url, text: pytest.fail(f"a link was shown: {url}"),
                               prompt=no_prompt, device_code=lambda url, code: shown.append((url, code)),
                               select=select)
    return callbacks, shown, asked


def test_login_to_a_models_json_gateway_signs_in_there_under_its_own_name(tmp_path, gateway):
    agent = tmp_path / "agent"
    write_models_json(agent, gateway_config(gateway))
    store = auth_storage(agent)
    callbacks, shown, asked = device_login()
    asyncio.run(store.login("my-radius", callbacks))
    assert asked == ["Sign in to My Radius:"]
    assert shown == [("https://radius.pi.dev/device", "WXYZ-2345")]
    assert gateway.of("/v1/oauth/device") and gateway.of("/v1/oauth/token")
    saved = json.loads((agent / "auth.json").read_text())
    assert list(saved) == ["my-radius"]
    assert saved["my-radius"]["type"] == "oauth" and saved["my-radius"]["access"].startswith("radius-access-")
    assert display_name("my-radius", agent) == "My Radius"
    assert "my-radius" in known_providers(agent)


def test_an_expired_gateway_sign_in_refreshes_at_its_own_gateway(tmp_path, gateway):
    agent = tmp_path / "agent"
    write_models_json(agent, gateway_config(gateway))
    (agent / "auth.json").write_text(json.dumps({"my-radius": {
        "type": "oauth", "access": "old", "refresh": gateway.issue_refresh_token("radius"), "expires": 1}}))
    flows = asyncio.run(_hook_sign_ins(agent))
    store = auth_storage(agent)
    store.sign_ins = flows  # as a running chat's store has them: through register_sign_ins
    key = asyncio.run(store.refreshed_key("my-radius"))
    assert key.startswith("radius-access-") and key != "old"
    assert [r["body"]["grant_type"] for r in gateway.of("/v1/oauth/token")] == ["refresh_token"]
    assert json.loads((agent / "auth.json").read_text())["my-radius"]["access"] == key


async def _hook_sign_ins(agent: Path) -> dict:
    return {flow.id: flow for flow in signin_plugin.register_sign_ins(SimpleNamespace(agent_dir=agent))}


def test_a_gateway_without_a_name_is_named_by_its_provider_id_and_the_default_stays(tmp_path, gateway):
    agent = tmp_path / "agent"
    write_models_json(agent, {"gw": {"baseUrl": f"{gateway.url}/v1/", "oauth": "radius"}})
    flows = sign_ins(agent)
    assert (flows["gw"].name, flows["gw"].gateway()) == ("gw", gateway.url)
    assert (flows["radius"].name, flows["radius"].gateway()) == ("Radius", "http://127.0.0.1:9")


def test_a_gateway_taken_out_of_models_json_is_no_longer_listed(tmp_path, monkeypatch):
    agent = tmp_path / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    write_models_json(agent, {"my-radius": {"baseUrl": "https://gw.example/v1", "oauth": "radius"}})
    house = {"id": "house", "provider": "my-radius", "api": "pi-messages", "baseUrl": "https://models.example/v1",
             "contextWindow": 50000, "maxTokens": 5000}
    (agent / "models-store.json").write_text(json.dumps({"my-radius": {"models": [house], "checkedAt": 1}}))
    assert [m.id for m in builtin_models() if m.provider == "my-radius"] == ["house"]
    write_models_json(agent, {})
    later = (agent / "models.json").stat().st_mtime_ns + 10_000_000  # a coarse clock may not tick between writes
    os.utime(agent / "models.json", ns=(later, later))
    assert [m for m in builtin_models() if m.provider == "my-radius"] == []
    assert "my-radius" in json.loads((agent / "models-store.json").read_text())  # kept, as pi 1.6 keeps it
