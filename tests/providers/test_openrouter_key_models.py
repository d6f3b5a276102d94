"""OpenRouter's per-key list (pi 1.6): with a key, only the chat models it may use, with
its limits and prices from ``/models/user``; saved in ``models-store.json`` and used
offline; image and classifier models pass unfiltered."""

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pi_plugins.providers.catalogue import builtin_models, other_model_kind
from pi_plugins.providers.catalogue_refresh import refresh
from pi_plugins.providers.openrouter_models import openrouter_cost
from support.catalogue_server import Catalogues

ALLOWED = {"id": "anthropic/claude-haiku-4.5", "context_length": 150000,
           "top_provider": {"context_length": 180000, "max_completion_tokens": 7000},
           "pricing": {"prompt": "0.000001", "completion": "0.000005", "input_cache_read": "0.0000001"}}
USER_MODELS = "/api/v1/models/user"


@pytest.fixture
def catalogues():
    server = Catalogues()
    yield server
    server.close()


@pytest.fixture
def agent(tmp_path, monkeypatch, catalogues):
    folder = tmp_path / "agent"
    folder.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(folder))
    monkeypatch.setenv("PI_PROVIDER_ORIGINS", json.dumps(origins(catalogues)))
    return folder


def origins(catalogues) -> dict:
    return {"https://pi.dev": catalogues.url, "https://openrouter.ai": catalogues.url}


def openrouter_models():
    return [m for m in builtin_models() if m.provider == "openrouter"]


def test_the_key_narrows_the_list_to_its_models_limits_and_prices(agent, catalogues):
    catalogues.answer(USER_MODELS, (200, {}, {"data": [ALLOWED, {"id": "not/in-the-catalogue"}, "junk"]}))
    image_model = next(m for m in json.loads((Path(__file__).parents[2] / "pi_plugins/providers/catalogue.json")
                                             .read_text())["otherModels"]["openrouter"])
    assert asyncio.run(refresh(agent, {"OPENROUTER_API_KEY": "or-key"})) == []
    asked = [(path, headers.get("authorization")) for path, headers in catalogues.requests]
    assert (USER_MODELS, "Bearer or-key") in asked
    [model] = openrouter_models()  # offline now: the saved list is what loads
    assert (model.id, model.context_window, model.max_tokens) == ("anthropic/claude-haiku-4.5", 180000, 7000)
    assert (model.cost.input, model.cost.output, model.cost.cache_read) == (1.0, 5.0, 0.1)
    assert other_model_kind("openrouter", image_model) is not None  # image and classifier models kept


@pytest.mark.parametrize("status", [401, 403, 404])
def test_an_endpoint_that_refuses_the_key_keeps_every_model(agent, catalogues, status):
    shipped = len(openrouter_models())
    catalogues.answer(USER_MODELS, (status, {}, b"no"))
    assert asyncio.run(refresh(agent, {"OPENROUTER_API_KEY": "or-key"})) == []
    assert len(openrouter_models()) == shipped


def test_a_failing_list_is_reported_and_nothing_is_saved(agent, catalogues):
    shipped = len(openrouter_models())
    catalogues.answer(USER_MODELS, (400, {}, b"bad"))
    failures = asyncio.run(refresh(agent, {"OPENROUTER_API_KEY": "or-key"}))
    assert failures == ["openrouter: OpenRouter model list request failed: 400"]
    assert len(openrouter_models()) == shipped


def test_the_list_is_asked_for_on_every_refresh_not_four_hourly(agent, catalogues):
    catalogues.answer(USER_MODELS, (200, {}, {"data": [ALLOWED]}))
    env = {"OPENROUTER_API_KEY": "or-key"}
    asyncio.run(refresh(agent, env, force=False))
    asyncio.run(refresh(agent, env, force=False))
    assert [p for p, _ in catalogues.requests].count(USER_MODELS) == 2


def test_prices_are_per_million_tokens_with_prompt_length_tiers():
    cost = openrouter_cost({"prompt": "0.000003", "completion": "-1", "overrides": [
        {"min_prompt_tokens": 200000, "prompt": "0.000006"},
        {"min_prompt_tokens": 1, "utc_start": "00:00", "prompt": "0"}]})
    assert cost == {"input": 3.0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                    "tiers": [{"inputTokensAbove": 200000, "input": 6.0, "output": 0, "cacheRead": 0,
                               "cacheWrite": 0}]}


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_the_requests_and_the_listing_are_pi_16s(tmp_path, catalogues):
    from support.programs import PI16, node_for

    shim = Path(__file__).parents[1] / "support" / "node" / "provider_origins.mjs"
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), "OPENROUTER_API_KEY": "or-key",
           "PI_PROVIDER_ORIGINS": json.dumps(origins(catalogues))}
    seen, listings = {}, {}
    for who in ("pi16", "ours"):
        catalogues.requests.clear()
        catalogues.answer(USER_MODELS, (200, {}, {"data": [ALLOWED]}))
        agent = tmp_path / who
        command = ([node_for("pi16"), "--import", str(shim), str(PI16 / "dist" / "cli.js")] if who == "pi16"
                   else [sys.executable, "-m", "pi_plugins.cli"])
        done = subprocess.run([*command, "update", "--models"], env={**env, "PI_CODING_AGENT_DIR": str(agent)},
                              capture_output=True, text=True, timeout=120)
        assert (done.returncode, done.stdout) == (0, "Model catalogs refreshed\n"), done.stderr
        seen[who] = sorted((path, h.get("authorization")) for path, h in catalogues.requests)
        listed = subprocess.run([*command, "--list-models", "openrouter"], capture_output=True, text=True,
                                timeout=90, env={**env, "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1"})
        listings[who] = listed.stdout
    assert seen["ours"] == seen["pi16"]
    assert listings["ours"] == listings["pi16"] and "claude-haiku-4.5" in listings["ours"]
    assert "180K" in listings["ours"] or "180" in listings["ours"]
