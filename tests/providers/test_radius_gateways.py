"""A Radius gateway of one's own in models.json (``"oauth": "radius"``, pi 1.6): it uses
its own gateway's catalogue, not radius.pi.dev's, cached for offline starts, and its
models speak ``pi-messages`` at the base URL the gateway names."""

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pi_plugins.providers.catalogue import builtin_models
from pi_plugins.providers.catalogue_refresh import refresh
from support.catalogue_server import Catalogues

HOUSE = {"id": "house", "name": "House", "reasoning": False, "input": ["text"],
         "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0}, "contextWindow": 50000,
         "maxTokens": 5000}


@pytest.fixture
def gateway():
    server = Catalogues()
    server.answer("/v1/config", (200, {}, {"baseUrl": "https://models.example/v1", "models": [HOUSE]}))
    yield server
    server.close()


def write_models_json(agent: Path, gateway) -> None:
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "models.json").write_text(json.dumps({"providers": {
        "my-radius": {"baseUrl": f"{gateway.url}/v1", "oauth": "radius", "name": "My Radius"}}}))


def test_a_gateway_in_models_json_gets_its_own_catalogue(tmp_path, monkeypatch, gateway):
    agent = tmp_path / "agent"
    write_models_json(agent, gateway)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    assert asyncio.run(refresh(agent, {"RADIUS_API_KEY": "rk", "PI_RADIUS_GATEWAY": gateway.url},
                               providers={"my-radius"})) == []
    assert gateway.requests[0][0] == "/v1/config" and gateway.requests[0][1]["authorization"] == "Bearer rk"
    [stored] = json.loads((agent / "models-store.json").read_text())["my-radius"]["models"]
    assert (stored["provider"], stored["api"], stored["baseUrl"]) == ("my-radius", "pi-messages",
                                                                      "https://models.example/v1")
    [house] = [m for m in builtin_models() if m.provider == "my-radius"]  # offline: from the cache
    assert (house.id, house.api, house.base_url, house.api_key_env) == (
        "house", "pi-messages", "https://models.example/v1", "RADIUS_API_KEY")


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_the_store_and_the_listing_are_pi_16s(tmp_path, gateway):
    from support.programs import PI16, node_for

    shim = Path(__file__).parents[1] / "support" / "node" / "provider_origins.mjs"
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), "RADIUS_API_KEY": "rk",
           "PI_PROVIDER_ORIGINS": json.dumps({"https://pi.dev": gateway.url, "https://radius.pi.dev": gateway.url})}
    stored, listed = {}, {}
    for who in ("pi16", "ours"):
        agent = tmp_path / who
        write_models_json(agent, gateway)
        command = ([node_for("pi16"), "--import", str(shim), str(PI16 / "dist" / "cli.js")] if who == "pi16"
                   else [sys.executable, "-m", "pi_plugins.cli"])
        run_env = {**env, "PI_CODING_AGENT_DIR": str(agent)}
        done = subprocess.run([*command, "update", "--models"], env=run_env, capture_output=True, text=True,
                              timeout=120)
        assert (done.returncode, done.stdout) == (0, "Model catalogs refreshed\n"), done.stderr
        entry = json.loads((agent / "models-store.json").read_text())["my-radius"]
        stored[who] = entry["models"]
        listing = subprocess.run([*command, "--list-models", "my-radius"], capture_output=True, text=True,
                                 timeout=90, env={**run_env, "PI_OFFLINE": "1"})
        listed[who] = listing.stdout
    assert stored["ours"] == stored["pi16"]
    assert listed["ours"] == listed["pi16"] and "my-radius  house" in listed["ours"]
