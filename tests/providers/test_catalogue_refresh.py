"""``pi update --models``: the catalogues of the providers with a key, fetched from a
local stand-in of pi.dev (and of the Radius gateway), kept in the agent dir's
``models-store.json`` as pi 1.6 keeps them, and laid over the shipped catalogue."""

import asyncio
import json
import os
import subprocess
import sys
from email.utils import formatdate
from pathlib import Path

import pytest

from pi_plugins.providers.catalogue import builtin_models, generated_at, other_model_kind
from pi_plugins.providers.catalogue_refresh import refresh
from pi_plugins.providers.models_store import generated_at_ms
from support.catalogue_server import Catalogues

SHIPPED_MS = generated_at_ms({"generatedAt": generated_at()})
NEWER = formatdate((SHIPPED_MS + 86_400_000) / 1000, usegmt=True)
OLDER = formatdate((SHIPPED_MS - 86_400_000) / 1000, usegmt=True)

GROQ_NEW = {"id": "groq-new-model", "name": "Groq New", "api": "openai-completions", "provider": "groq",
            "baseUrl": "https://api.groq.com/openai/v1", "reasoning": True, "input": ["text"],
            "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0}, "contextWindow": 262144,
            "maxTokens": 65536, "type": "chat"}
GROQ_CHANGED = {**GROQ_NEW, "id": "llama-3.3-70b-versatile", "name": "Llama renamed", "maxTokens": 4242}
GROQ_CLASSIFIER = {"id": "groq-judge", "name": "Judge", "api": "typesafe-system-one", "provider": "groq",
                   "baseUrl": "https://api.groq.com/openai/v1", "input": ["text"],
                   "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}, "type": "classifier"}


@pytest.fixture
def catalogues():
    server = Catalogues()
    yield server
    server.close()


@pytest.fixture
def agent(tmp_path, monkeypatch, catalogues):
    """An agent dir that this process's catalogue reads, pi.dev moved to the stand-in."""
    folder = tmp_path / "agent"
    folder.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(folder))
    monkeypatch.setenv("PI_PROVIDER_ORIGINS", json.dumps({"https://pi.dev": catalogues.url}))
    return folder


def env_with(catalogues, **keys):
    return {"PI_PROVIDER_ORIGINS": json.dumps({"https://pi.dev": catalogues.url}), **keys}


def store_of(agent: Path) -> dict:
    return json.loads((agent / "models-store.json").read_text())


def models_by_key():
    return {m.key: m for m in builtin_models()}


def test_a_configured_providers_newer_catalogue_is_stored_and_laid_over_the_shipped_one(agent, catalogues):
    catalogues.answer("/api/models/providers/groq",
                      (200, {"last-modified": NEWER, "etag": '"v1"'}, [GROQ_NEW, GROQ_CHANGED, GROQ_CLASSIFIER]))
    failures = asyncio.run(refresh(agent, env_with(catalogues, GROQ_API_KEY="k")))
    assert failures == []
    [(path, headers)] = catalogues.requests  # only the provider with a key
    assert path == "/api/models/providers/groq?types=chat%2Cimage%2Cclassifier"
    assert headers["accept"] == "application/json" and "if-none-match" not in headers
    entry = store_of(agent)["groq"]
    assert entry["etag"] == '"v1"' and entry["lastModified"] == (SHIPPED_MS + 86_400_000) // 1000 * 1000  # HTTP dates: whole seconds
    assert [m["id"] for m in entry["models"]] == ["groq-new-model", "llama-3.3-70b-versatile", "groq-judge"]
    models = models_by_key()
    new = models["groq/groq-new-model"]
    assert (new.api, new.context_window, new.max_tokens, new.reasoning) == ("openai-completions", 262144, 65536, True)
    assert models["groq/llama-3.3-70b-versatile"].max_tokens == 4242
    assert "groq/openai/gpt-oss-120b" in models  # the shipped models stay
    assert other_model_kind("groq", "groq-judge") == "classifier" and "groq/groq-judge" not in models


def test_the_next_refresh_revalidates_with_the_etag_and_a_304_keeps_the_list(agent, catalogues):
    catalogues.answer("/api/models/providers/groq",
                      (200, {"last-modified": NEWER, "etag": '"v1"'}, [GROQ_NEW]), (304, {}, b""))
    env = env_with(catalogues, GROQ_API_KEY="k")
    assert asyncio.run(refresh(agent, env)) == []
    first = store_of(agent)["groq"]
    assert asyncio.run(refresh(agent, env)) == []
    assert catalogues.requests[1][1]["if-none-match"] == '"v1"'
    second = store_of(agent)["groq"]
    assert second["models"] == first["models"] and second["checkedAt"] >= first["checkedAt"]
    assert "groq/groq-new-model" in models_by_key()


def test_a_catalogue_no_newer_than_the_shipped_data_is_kept_but_not_used(agent, catalogues):
    catalogues.answer("/api/models/providers/groq", (200, {"last-modified": OLDER}, {"models": [GROQ_NEW]}))
    assert asyncio.run(refresh(agent, env_with(catalogues, GROQ_API_KEY="k"))) == []
    assert store_of(agent)["groq"]["models"][0]["id"] == "groq-new-model"
    assert "groq/groq-new-model" not in models_by_key()


def test_a_failing_catalogue_is_retried_then_reported_and_the_stored_list_kept(agent, catalogues):
    catalogues.answer("/api/models/providers/groq", (200, {"last-modified": NEWER, "etag": '"v1"'}, [GROQ_NEW]))
    env = env_with(catalogues, GROQ_API_KEY="k")
    asyncio.run(refresh(agent, env))
    catalogues.requests.clear()
    catalogues.answer("/api/models/providers/groq", (503, {}, b"busy"))
    failures = asyncio.run(refresh(agent, env))
    assert failures == ["groq: Model catalog request failed for groq: 503"]
    assert len(catalogues.requests) == 3  # pi's two retries of a 5xx
    assert store_of(agent)["groq"]["models"][0]["id"] == "groq-new-model"
    assert "groq/groq-new-model" in models_by_key()


def test_a_provider_pi_dev_has_no_catalogue_for_is_marked_checked(agent, catalogues):
    assert asyncio.run(refresh(agent, env_with(catalogues, GROQ_API_KEY="k"))) == []  # the stand-in's 404
    assert store_of(agent)["groq"] == {"models": [], "checkedAt": store_of(agent)["groq"]["checkedAt"],
                                       "lastModified": 0}


def test_radius_takes_its_gateways_catalogue_in_place_of_the_shipped_one(agent, catalogues):
    gateway_model = {"id": "balanced", "name": "Balanced", "reasoning": True, "input": ["text", "image"],
                     "cost": {"input": 1, "output": 5, "cacheRead": 0, "cacheWrite": 0},
                     "contextWindow": 400000, "maxTokens": 128000}
    catalogues.answer("/v1/config", (200, {}, {"baseUrl": "https://gw.example/v1",
                                               "models": [gateway_model, {"id": "broken"}]}))
    env = {"RADIUS_API_KEY": "rk", "PI_RADIUS_GATEWAY": catalogues.url}
    assert asyncio.run(refresh(agent, env)) == []
    [(path, headers)] = catalogues.requests
    assert path == "/v1/config" and headers["authorization"] == "Bearer rk"
    [stored] = store_of(agent)["radius"]["models"]
    assert (stored["api"], stored["provider"], stored["baseUrl"]) == ("pi-messages", "radius", "https://gw.example/v1")
    radius = [m for m in builtin_models() if m.provider == "radius"]
    assert [(m.id, m.base_url, m.context_window) for m in radius] == [("balanced", "https://gw.example/v1", 400000)]


def test_a_gateway_that_refuses_is_reported_with_its_answer(agent, catalogues):
    catalogues.answer("/v1/config", (401, {}, b"bad key"))
    failures = asyncio.run(refresh(agent, {"RADIUS_API_KEY": "rk", "PI_RADIUS_GATEWAY": catalogues.url}))
    assert failures == [f"radius: Could not load Radius config from {catalogues.url}: 401: bad key"]


def test_a_store_that_is_not_json_is_said_once_and_the_shipped_catalogue_still_loads(agent, capsys):
    (agent / "models-store.json").write_text("{torn")
    models = models_by_key()
    assert "groq/llama-3.3-70b-versatile" in models and len(models) == 1698
    assert "models-store.json is not valid JSON" in capsys.readouterr().err


@pytest.mark.process
def test_the_command_says_pis_words(tmp_path, catalogues):
    agent = tmp_path / "agent"
    catalogues.answer("/api/models/providers/groq", (200, {"last-modified": NEWER}, [GROQ_NEW]))
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PI_CODING_AGENT_DIR": str(agent),
           **env_with(catalogues, GROQ_API_KEY="k")}
    done = subprocess.run([sys.executable, "-m", "pi_plugins.cli", "update", "--models"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "Model catalogs refreshed\n"), done.stderr
    listed = subprocess.run([sys.executable, "-m", "pi_plugins.cli", "--list-models", "groq-new"], env=env,
                            capture_output=True, text=True, timeout=60)
    assert "groq-new-model" in listed.stdout
    both = subprocess.run([sys.executable, "-m", "pi_plugins.cli", "update", "--models", "--extensions"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert both.returncode == 1
    assert both.stderr.splitlines()[0] == "--models cannot be combined with --self, --extensions, --all, or --extension"


def run_update(program: str, agent: Path, env: dict) -> subprocess.CompletedProcess:
    """``pi update --models`` by pi 1.6 (with the origins shim) or by us."""
    from support.programs import PI16, node_for

    shim = Path(__file__).parents[1] / "support" / "node" / "provider_origins.mjs"
    command = ([node_for("pi16"), "--import", str(shim), str(PI16 / "dist" / "cli.js")] if program == "pi16"
               else [sys.executable, "-m", "pi_plugins.cli"])
    return subprocess.run([*command, "update", "--models"], env={**env, "PI_CODING_AGENT_DIR": str(agent)},
                          capture_output=True, text=True, timeout=120)


def without_check_times(store: dict) -> dict:
    return {p: {k: v for k, v in entry.items() if k != "checkedAt"} for p, entry in store.items()}


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_the_store_the_requests_and_the_listing_are_pi_16s(tmp_path, catalogues):
    from support.programs import require_real

    require_real("pi16")
    gateway_model = {"id": "balanced", "name": "B", "reasoning": True, "input": ["text"],
                     "cost": {"input": 1, "output": 5, "cacheRead": 0, "cacheWrite": 0},
                     "contextWindow": 400000, "maxTokens": 128000}
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), "GROQ_API_KEY": "k", "RADIUS_API_KEY": "rk",
           "PI_PROVIDER_ORIGINS": json.dumps({"https://pi.dev": catalogues.url,
                                              "https://radius.pi.dev": catalogues.url})}
    seen, stores, listings = {}, {}, {}
    for who in ("pi16", "ours"):
        catalogues.requests.clear()
        catalogues.answer("/api/models/providers/groq",
                          (200, {"last-modified": NEWER, "etag": '"v1"'}, [GROQ_NEW, GROQ_CHANGED]), (304, {}, b""))
        catalogues.answer("/v1/config", (200, {}, {"baseUrl": "https://gw.example/v1", "models": [gateway_model]}))
        agent = tmp_path / who
        first, second = run_update(who, agent, env), run_update(who, agent, env)
        assert (first.returncode, first.stdout, second.stdout) == (0, "Model catalogs refreshed\n",
                                                                   "Model catalogs refreshed\n"), first.stderr
        seen[who] = sorted(repr((path, h.get("accept"), h.get("authorization"), h.get("if-none-match")))
                           for path, h in catalogues.requests)
        stores[who] = without_check_times(store_of(agent))
        listed = subprocess.run([sys.executable, "-m", "pi_plugins.cli", "--list-models"], capture_output=True,
                                text=True, timeout=60, env={**env, "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1"})
        listings[who] = listed.stdout  # ours reads what each wrote
    assert seen["ours"] == seen["pi16"]
    assert stores["ours"] == stores["pi16"]
    assert listings["ours"] == listings["pi16"] and "groq-new-model" in listings["ours"]
    from support.programs import PI16, node_for

    with open(tmp_path / "pi-list.txt", "w") as out:  # and pi 1.6 lists its own store as we list it
        subprocess.run([node_for("pi16"), str(PI16 / "dist" / "cli.js"), "--list-models"], stdout=out,
                       env={**env, "PI_CODING_AGENT_DIR": str(tmp_path / "pi16"), "PI_OFFLINE": "1"}, timeout=90)
    assert (tmp_path / "pi-list.txt").read_text() == listings["ours"]
