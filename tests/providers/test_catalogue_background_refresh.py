"""pi 1.6's background catalogue refresh, against a local stand-in of pi.dev: at start-up
in ``--mode rpc`` (and the chat) the catalogues of the providers with a key are refreshed
without holding up the start or a prompt, and the new models appear in the running pi; a
catalogue checked within four hours is not asked for again; ``PI_OFFLINE`` sends nothing;
a failure is silent; ``-p`` does not refresh. (The start-up delay of a second is made
none here.)"""

import asyncio
import json
import threading
import time
from email.utils import formatdate

import pytest

from pi_plugins.models.registry import ModelRegistry
from pi_plugins.providers.background_refresh import refresh_in_background
from pi_plugins.providers.catalogue import builtin_models, generated_at
from pi_plugins.providers.models_store import generated_at_ms
from support.catalogue_server import Catalogues
from support.cli import use_environment
from support.llm_server import Reply
from support.rpc import InProcessPi, rpc_starter

NEWER = formatdate((generated_at_ms({"generatedAt": generated_at()}) + 86_400_000) / 1000, usegmt=True)
GROQ_NEW = {"id": "groq-new-model", "name": "Groq New", "api": "openai-completions", "provider": "groq",
            "baseUrl": "https://api.groq.com/openai/v1", "reasoning": False, "input": ["text"],
            "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0}, "contextWindow": 131072,
            "maxTokens": 8192, "type": "chat"}
ROUTE = "/api/models/providers/groq"
HOUR_MS = 3_600_000


@pytest.fixture
def catalogues():
    server = Catalogues()
    server.answer(ROUTE, (200, {"last-modified": NEWER, "etag": '"v1"'}, [GROQ_NEW]))
    yield server
    server.close()


@pytest.fixture
def start_rpc(pi, catalogues, monkeypatch):
    """``pi --mode rpc`` in this process, with a Groq key and pi.dev moved to the stand-in."""
    pi.env.update({"GROQ_API_KEY": "gsk-test", "PI_PROVIDER_ORIGINS": json.dumps({"https://pi.dev": catalogues.url})})

    def start(*flags, **env):
        use_environment(monkeypatch, {**pi.env, **env}, pi.cwd)
        monkeypatch.setattr("pi_plugins.providers.background_refresh.START_DELAY_SECONDS", 0.0)
        return starter(*flags)

    with rpc_starter(lambda *args: InProcessPi(*pi.flags(*args))) as starter:
        yield start


def store_of(pi) -> dict:
    path = pi.agent_dir / "models-store.json"
    return json.loads(path.read_text()) if path.exists() else {}


def available(rpc) -> set[str]:
    return {f"{m['provider']}/{m['id']}" for m in rpc.ok("get_available_models")["models"]}


def wait_until(condition, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_rpc_refreshes_at_start_without_holding_up_a_prompt_and_shows_the_new_models(start_rpc, pi, server,
                                                                                     catalogues):
    catalogues.hold = threading.Event()  # pi.dev answers only when the prompt is done
    rpc = start_rpc()
    assert wait_until(lambda: catalogues.requests)
    server.push(Reply(text="answered"))
    rpc.ok("prompt", message="hi")
    assert rpc.event("agent_end")["messages"][-1]["content"] == [{"type": "text", "text": "answered"}]
    assert "groq/groq-new-model" not in available(rpc)
    catalogues.hold.set()
    assert wait_until(lambda: "groq/groq-new-model" in available(rpc))
    [(path, _)] = catalogues.requests  # only the provider with a key
    assert path.startswith(ROUTE + "?types=")
    assert store_of(pi)["groq"]["etag"] == '"v1"'


def test_a_catalogue_checked_within_four_hours_is_not_asked_for_again(start_rpc, pi, catalogues):
    now = int(time.time() * 1000)
    store = {"groq": {"models": [GROQ_NEW], "lastModified": now - 24 * HOUR_MS, "checkedAt": now - 3 * HOUR_MS}}
    (pi.agent_dir / "models-store.json").write_text(json.dumps(store))
    rpc = start_rpc()
    assert "groq/groq-new-model" in available(rpc)  # the stored list is used as it is
    time.sleep(0.5)
    assert catalogues.requests == [] and store_of(pi) == store


def test_a_catalogue_checked_more_than_four_hours_ago_is_revalidated(start_rpc, pi, catalogues):
    now = int(time.time() * 1000)
    store = {"groq": {"models": [GROQ_NEW], "lastModified": now - 24 * HOUR_MS, "checkedAt": now - 5 * HOUR_MS,
                      "etag": '"v0"'}}
    (pi.agent_dir / "models-store.json").write_text(json.dumps(store))
    start_rpc()
    assert wait_until(lambda: store_of(pi)["groq"]["checkedAt"] > now - HOUR_MS)
    assert catalogues.requests[0][1]["if-none-match"] == '"v0"'


def test_offline_nothing_is_asked_for(start_rpc, pi, catalogues):
    rpc = start_rpc(PI_OFFLINE="1")
    assert rpc.ok("get_available_models")["models"]
    time.sleep(0.5)
    assert catalogues.requests == [] and store_of(pi) == {}


def test_a_failed_refresh_is_silent_and_the_start_goes_on(start_rpc, pi, server, catalogues):
    catalogues.answer(ROUTE, (500, {}, b"down"))
    rpc = start_rpc()
    assert wait_until(lambda: len(catalogues.requests) == 3)  # pi's catalogue retries
    server.push(Reply(text="answered"))
    rpc.ok("prompt", message="hi")
    assert rpc.event("agent_end")["messages"][-1]["content"] == [{"type": "text", "text": "answered"}]
    assert "catalog" not in rpc.stderr.lower()
    assert "groq/groq-new-model" not in available(rpc)


@pytest.mark.process
def test_print_mode_does_not_refresh(pi, server, catalogues):
    pi.env.update({"GROQ_API_KEY": "gsk-test", "PI_PROVIDER_ORIGINS": json.dumps({"https://pi.dev": catalogues.url})})
    server.push(Reply(text="answered"))
    done = pi.run("--no-session", "-p", "hi")
    assert done.returncode == 0 and done.stdout.strip() == "answered"
    assert catalogues.requests == []


def test_a_refresh_publishes_to_the_running_registry_and_keeps_other_models(tmp_path, monkeypatch, catalogues):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
    env = {"GROQ_API_KEY": "gsk-test", "PI_PROVIDER_ORIGINS": json.dumps({"https://pi.dev": catalogues.url})}
    monkeypatch.setenv("PI_PROVIDER_ORIGINS", env["PI_PROVIDER_ORIGINS"])
    from pi_core.protocol.model import Model

    mine = Model(id="mine", provider="plugin", api="openai-completions", name="mine", base_url="http://127.0.0.1:9")
    registry = ModelRegistry([mine, *builtin_models()], agent_dir=tmp_path, env=env, models_json=False)

    async def go():
        first = refresh_in_background(registry)
        assert refresh_in_background(registry) is first  # one at a time, shared
        return await first

    assert asyncio.run(go()) == []
    assert registry.find("groq", "groq-new-model") is not None
    assert registry.find("plugin", "mine") is not None and registry.builtin[0] is mine
    assert len([m for m in registry.builtin if m.provider == "anthropic"]) == \
        len([m for m in builtin_models() if m.provider == "anthropic"])


def test_a_models_json_provider_has_no_catalogue_to_ask_for(tmp_path, monkeypatch, catalogues):
    from pi_plugins.providers.catalogue_refresh import refresh

    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
    (tmp_path / "models.json").write_text(json.dumps(
        {"providers": {"acme": {"baseUrl": "https://acme.example/v1", "api": "openai-completions", "apiKey": "k",
                                "models": [{"id": "acme-1"}]}}}))
    env = {"PI_PROVIDER_ORIGINS": json.dumps({"https://pi.dev": catalogues.url})}
    assert asyncio.run(refresh(tmp_path, env, force=False)) == []
    assert catalogues.requests == []


def test_a_sign_in_during_a_refresh_is_refreshed_after_it_not_left_out(tmp_path, monkeypatch, catalogues):
    """The start-up refresh chose its providers before the key existed: the signed-in
    provider's refresh is queued after it (pi 1.6), not folded into it."""
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
    env = {"PI_PROVIDER_ORIGINS": json.dumps({"https://pi.dev": catalogues.url})}
    monkeypatch.setenv("PI_PROVIDER_ORIGINS", env["PI_PROVIDER_ORIGINS"])
    registry = ModelRegistry(builtin_models(), agent_dir=tmp_path, env=env, models_json=False)

    async def go():
        start_up = refresh_in_background(registry)
        await asyncio.sleep(0)  # it has chosen its providers: none has a key yet
        registry.auth.set_api_key("groq", "gsk-test")  # the sign-in
        after_login = refresh_in_background(registry, providers=["groq"])
        assert after_login is not start_up
        assert await start_up == []
        return await after_login

    assert asyncio.run(go()) == []
    assert [path.split("?")[0] for path, *_ in catalogues.requests] == [ROUTE]  # the start-up one asked none
    assert registry.find("groq", "groq-new-model") is not None


def test_model_says_what_did_not_refresh_in_pi16s_words():
    from pi_plugins.providers.background_refresh import refresh_notice

    assert refresh_notice([], "showing") is None
    assert refresh_notice(["groq: 500 down"], "showing") == "Could not refresh groq; showing cached models."
    assert refresh_notice(["groq: 500", "xai: 502"], "showing") == \
        "Could not refresh 2 model catalogs (groq, xai); showing cached models."
    assert refresh_notice(["groq: 500", "xai: 502"], "searching") == \
        "Could not refresh groq, xai; searching cached models."
    assert refresh_notice(["Model catalog refresh timed out."], "searching") == \
        "Model refresh timed out; searching cached models."
