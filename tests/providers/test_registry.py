"""The model registry: catalogue + models.json, keys in order, patterns, the listing."""

import asyncio
import json
import os
import stat

import pytest
from support.llm_server import Reply
from support.provider_streams import collect, run

from pi_plugins.models.auth import AuthStorage
from pi_core.app.discovery import load_plugins
from pi_plugins.models.registry import AmbiguousModelError, ModelNotFoundError, ModelRegistry
from pi_plugins.cli.list_models import model_table
from pi_core.protocol.messages import TextContent, UserMessage
from pi_core.protocol.model import Model
from pi_core.protocol.provider import LlmContext, StreamOptions
from pi_plugins.providers.catalogue import builtin_models


def registry(tmp_path, models_json=None, auth=None, env=None, builtin=True):
    if models_json is not None:
        text = models_json if isinstance(models_json, str) else json.dumps(models_json)
        (tmp_path / "models.json").write_text(text)
    if auth is not None:
        (tmp_path / "auth.json").write_text(json.dumps(auth))
    return ModelRegistry(builtin_models() if builtin else [], agent_dir=tmp_path, env=env or {})


# ---------------------------------------------------------------- catalogue


def test_catalogue_has_the_main_models_with_prices_and_limits():
    models = {m.key: m for m in builtin_models()}
    for key in ("anthropic/claude-sonnet-4-5", "openai/gpt-5", "openai/gpt-4o", "google/gemini-2.5-pro",
                "groq/llama-3.3-70b-versatile", "xai/grok-4.7", "mistral/mistral-large-latest",
                "openrouter/anthropic/claude-sonnet-4.5", "ant-ling/Ring-2.6-1T", "azure/gpt-5",
                "baseten/zai-org/GLM-5.3", "meta/muse-spark-1.3", "together/moonshotai/Kimi-K3",
                "qwen-token-plan/qwen3.8-max", "zai-coding-cn/glm-5.3"):
        assert key in models, key
    sonnet = models["anthropic/claude-sonnet-4-5"]
    assert (sonnet.api, sonnet.base_url, sonnet.reasoning) == ("anthropic-messages", "https://api.anthropic.com", True)
    assert (sonnet.cost.input, sonnet.cost.output, sonnet.context_window) == (3, 15, 200000)
    assert models["openai/gpt-5"].api == "openai-responses"
    assert models["google/gemini-2.5-flash"].api_key_env == "GEMINI_API_KEY"
    assert any(m.provider == "deepseek" for m in models.values())
    assert {m.api for m in models.values()} >= {"anthropic-messages", "openai-responses", "openai-completions",
                                                "google-generative-ai", "openai-codex-responses"}
    assert models["nvidia/nvidia/nemotron-3.5-super-vl-120b-a12b"].api_key_env == "NVIDIA_API_KEY"
    assert len({m.provider for m in models.values()}) == 42 and len(models) == 1698  # pi 1.6's


def test_the_plugins_register_the_catalogue_and_one_provider_per_api():
    plugins = load_plugins(discover=False)

    async def go():
        providers = await plugins.call("register_providers", ctx=None)
        reg = await ModelRegistry.from_plugins(plugins, agent_dir="/nonexistent", env={})
        return providers, reg

    providers, reg = asyncio.run(go())
    assert {p.api for p in providers} >= {"openai-completions", "openai-responses", "anthropic-messages",
                                          "google-generative-ai"}
    assert reg.find("anthropic", "claude-sonnet-4-5") is not None


# ---------------------------------------------------------------- models.json


def test_models_json_adds_a_local_provider_that_needs_no_key(tmp_path, llm_server):
    reg = registry(tmp_path, llm_server.models_json("ollama", "openai-completions",
                                                    [{"id": "llama3.1:8b", "reasoning": True}]))
    model = reg.find("ollama", "llama3.1:8b")
    assert model.base_url == llm_server.base_url("openai-completions")
    assert (model.name, model.context_window, model.max_tokens, model.input) == ("llama3.1:8b", 128000, 16384, ["text"])
    assert reg.api_key(model) is None and model in reg.available()
    llm_server.push(Reply(text="local answer"))
    message = run(collect(model, LlmContext(messages=[UserMessage(content=[TextContent("hi")])]),
                          StreamOptions(api_key=reg.api_key(model))))[1]
    assert message.text == "local answer"


def test_models_json_overrides_base_url_compat_and_single_model_fields(tmp_path):
    reg = registry(tmp_path, {"providers": {
        "anthropic": {"baseUrl": "https://proxy.example/v1", "compat": {"supportsEagerToolInputStreaming": False},
                      "modelOverrides": {"claude-sonnet-4-5": {"name": "Sonnet via proxy", "cost": {"input": 1},
                                                               "maxTokens": 1000}}},
        "openai": {"models": [{"id": "gpt-5", "name": "Mine", "contextWindow": 5}, {"id": "gpt-new"}]},
    }})
    sonnet = reg.find("anthropic", "claude-sonnet-4-5")
    assert sonnet.base_url == "https://proxy.example/v1"
    assert sonnet.compat == {"supportsStrictTools": True, "supportsEagerToolInputStreaming": False,
                             "credentialsEnv": [["ANTHROPIC_FEDERATION_RULE_ID", "ANTHROPIC_ORGANIZATION_ID",
                                                 "ANTHROPIC_IDENTITY_TOKEN_FILE"]]}  # workload identity federation
    assert (sonnet.name, sonnet.cost.input, sonnet.cost.output, sonnet.max_tokens) == ("Sonnet via proxy", 1, 15, 1000)
    assert reg.find("anthropic", "claude-opus-4-5").base_url == "https://proxy.example/v1"
    assert reg.find("openai", "gpt-5").name == "Mine" and reg.find("openai", "gpt-5").context_window == 5
    new = reg.find("openai", "gpt-new")
    assert (new.api, new.base_url) == ("openai-responses", "https://api.openai.com/v1")  # inherited
    assert len([m for m in reg.models if m.key == "openai/gpt-5"]) == 1


def test_models_json_accepts_comments_and_trailing_commas(tmp_path):
    reg = registry(tmp_path, '{"providers": {  // mine\n "x": {"baseUrl": "http://h/v1", "api": "openai-completions",'
                             ' "models": [{"id": "a//b"},],},}}')
    assert reg.find("x", "a//b") is not None and reg.errors == []


@pytest.mark.parametrize("bad,reason", [
    ("{not json", "not valid JSON"),
    ({"providers": {"x": {"api": "openai-completions", "models": [{"id": "m"}]}}}, '"baseUrl" is required'),
    ({"providers": {"x": {"baseUrl": "http://h", "models": [{"id": "m"}]}}}, 'no "api"'),
    ({"providers": {"x": {"baseUrl": "http://h", "api": "a", "models": [{"name": "no id"}]}}}, "id must be"),
    ({"providers": {"x": {"baseUrl": "http://h", "api": "a", "models": [{"id": "m", "maxTokens": -1}]}}}, "maxTokens"),
    ({"models": []}, '"providers"'),
])
def test_a_bad_models_json_is_reported_and_the_built_ins_stay(tmp_path, bad, reason):
    reg = registry(tmp_path, bad)
    assert len(reg.errors) == 1 and reason in reg.errors[0] and "models.json" in reg.errors[0]
    assert reg.find("anthropic", "claude-sonnet-4-5") is not None
    assert reg.find("x", "m") is None


def test_headers_resolve_from_the_environment(tmp_path):
    reg = registry(tmp_path, {"providers": {"p": {
        "baseUrl": "http://h/v1", "api": "openai-completions", "headers": {"x-portkey": "PORTKEY_KEY", "x-lit": "plain"},
        "models": [{"id": "m", "headers": {"x-model": "value"}}]}}}, env={"PORTKEY_KEY": "from-env"})
    assert reg.find("p", "m").headers == {"x-portkey": "from-env", "x-lit": "plain", "x-model": "value"}


# ---------------------------------------------------------------- keys


def test_key_precedence_is_cli_then_auth_json_then_environment_then_models_json(tmp_path):
    models_json = {"providers": {"openai": {"baseUrl": "https://api.openai.com/v1", "apiKey": "from-models-json"}}}
    env = {"OPENAI_API_KEY": "from-env"}
    auth = {"openai": {"type": "api_key", "key": "from-auth"}}
    gpt = lambda reg: reg.find("openai", "gpt-5")  # noqa: E731
    for sub in "abcde":
        (tmp_path / sub).mkdir()

    reg = registry(tmp_path / "a", models_json, auth, env)
    reg.set_runtime_key("openai", "from-cli")
    assert (reg.api_key(gpt(reg)), reg.key_source(gpt(reg))) == ("from-cli", "--api-key")
    reg = registry(tmp_path / "b", models_json, auth, env)
    assert (reg.api_key(gpt(reg)), reg.key_source(gpt(reg))) == ("from-auth", "auth.json")
    reg = registry(tmp_path / "c", models_json, None, env)
    assert (reg.api_key(gpt(reg)), reg.key_source(gpt(reg))) == ("from-env", "environment (OPENAI_API_KEY)")
    reg = registry(tmp_path / "d", models_json, None, {})
    assert (reg.api_key(gpt(reg)), reg.key_source(gpt(reg))) == ("from-models-json", "models.json")
    reg = registry(tmp_path / "e", None, None, {})
    assert reg.api_key(gpt(reg)) is None and gpt(reg) not in reg.available()


def test_google_uses_gemini_api_key_and_others_their_provider_name(tmp_path):
    reg = registry(tmp_path, env={"GEMINI_API_KEY": "g", "GROQ_API_KEY": "q", "XAI_API_KEY": "x"})
    assert reg.api_key(reg.find("google", "gemini-2.5-flash")) == "g"
    assert reg.api_key(reg.find("groq", "llama-3.3-70b-versatile")) == "q"
    assert reg.api_key(reg.find("xai", "grok-4.7")) == "x"
    assert {m.provider for m in reg.available()} == {"google", "groq", "xai"}


def test_qwen_token_plan_takes_its_plan_key_then_the_shared_one_as_pi_16(tmp_path):
    shared = registry(tmp_path, env={"QWEN_TOKEN_PLAN_API_KEY": "shared"})
    model = shared.find("qwen-token-plan", "qwen3.8-max")
    assert shared.api_key(model) == "shared" and model in shared.available()
    both = registry(tmp_path, env={"QWEN_TOKEN_PLAN_API_KEY": "shared", "QWEN_TOKEN_PLAN_TEAM_API_KEY": "team"})
    assert both.api_key(model) == "team"
    assert {"shared", "team"} <= {key for key, _ in both.held_keys()}  # both kept from the model


def test_cloudflare_models_need_the_account_and_gateway_ids_as_pi_16_lists_them(tmp_path):
    key_only = registry(tmp_path, env={"CLOUDFLARE_API_KEY": "cf"})
    assert not [m for m in key_only.available() if m.provider.startswith("cloudflare")]
    with_account = registry(tmp_path, env={"CLOUDFLARE_API_KEY": "cf", "CLOUDFLARE_ACCOUNT_ID": "acct"})
    assert {m.provider for m in with_account.available()} == {"cloudflare-workers-ai"}
    everything = registry(tmp_path, env={"CLOUDFLARE_API_KEY": "cf", "CLOUDFLARE_ACCOUNT_ID": "acct",
                                         "CLOUDFLARE_GATEWAY_ID": "gw"})
    assert {m.provider for m in everything.available()} == {"cloudflare-workers-ai", "cloudflare-ai-gateway"}


def test_key_values_may_name_an_environment_variable_or_a_command(tmp_path):
    reg = registry(tmp_path, {"providers": {
        "cmd": {"baseUrl": "http://h/v1", "api": "openai-completions", "apiKey": "!printf from-command",
                "models": [{"id": "m"}]},
        "var": {"baseUrl": "http://h/v1", "api": "openai-completions", "apiKey": "MY_KEY_VAR", "models": [{"id": "m"}]},
    }}, auth={"anthropic": {"type": "api_key", "key": "ANTHROPIC_FROM_VAR"}},
        env={"MY_KEY_VAR": "var-value", "ANTHROPIC_FROM_VAR": "anth"})
    assert reg.api_key(reg.find("cmd", "m")) == "from-command"
    assert reg.api_key(reg.find("var", "m")) == "var-value"
    assert reg.api_key(reg.find("anthropic", "claude-sonnet-4-5")) == "anth"


def test_auth_json_is_created_0600_and_keys_stay_out_of_reprs_and_errors(tmp_path):
    path = tmp_path / "agent" / "auth.json"
    storage = AuthStorage(path)
    storage.set_api_key("openai", "sk-secret-value")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert json.loads(path.read_text()) == {"openai": {"type": "api_key", "key": "sk-secret-value"}}
    assert AuthStorage(path).api_key("openai") == "sk-secret-value"
    reg = ModelRegistry(builtin_models(), agent_dir=tmp_path / "agent", env={})
    assert "sk-secret" not in repr(reg) + repr(reg.auth) + repr(reg.find("openai", "gpt-5"))
    path.write_text('{"openai": {"key": "sk-secret-value"')  # torn
    reg = ModelRegistry(builtin_models(), agent_dir=tmp_path / "agent", env={})
    assert len(reg.errors) == 1 and "auth.json" in reg.errors[0] and "sk-secret" not in reg.errors[0]


def test_the_auth_header_option_adds_a_bearer_token(tmp_path):
    reg = registry(tmp_path, {"providers": {"p": {"baseUrl": "http://h", "api": "anthropic-messages",
                                                  "apiKey": "tok", "authHeader": True, "models": [{"id": "m"}]}}})
    assert reg.request_headers(reg.find("p", "m")) == {"Authorization": "Bearer tok"}


# ---------------------------------------------------------------- patterns


@pytest.mark.parametrize("pattern,key,level", [
    ("anthropic/claude-sonnet-4-5", "anthropic/claude-sonnet-4-5", None),
    ("anthropic/claude-sonnet-4-5:high", "anthropic/claude-sonnet-4-5", "high"),
    # Partial patterns over pi 1.6's whole catalogue pick what pi 1.6's resolver picks
    # (resolveModelReference, no provider signed in): the alias that sorts highest
    ("sonnet-4-5", "amazon-bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0", None),
    ("anthropic/sonnet-4-5", "anthropic/claude-sonnet-4-5", None),  # the alias, not the dated version
    ("opus-4-1", "amazon-bedrock/us.anthropic.claude-opus-4-1-20250805-v1:0", None),
    ("anthropic/opus-4-1", "anthropic/opus-4-1", None),  # none in 1.6's anthropic: a custom id
    ("openrouter/anthropic/claude-sonnet-4", "openrouter/anthropic/claude-sonnet-4.6:batch", None),
    ("google/gemini-2.5-flash:off", "google/gemini-2.5-flash", "off"),
])
def test_patterns_resolve_like_pi(tmp_path, pattern, key, level):
    reg = registry(tmp_path)
    found = reg.resolve(pattern)
    assert found.model.key == key
    assert found.thinking_level == level


@pytest.mark.parametrize("pattern,env,key,level", [
    ("claude-sonnet-4-5", {"ANTHROPIC_API_KEY": "a"}, "anthropic/claude-sonnet-4-5", None),
    ("CLAUDE-SONNET-4-5:high", {"OPENCODE_API_KEY": "o"}, "opencode/claude-sonnet-4-5", "high"),
    ("sonnet-4-5", {"ANTHROPIC_API_KEY": "a"}, "anthropic/claude-sonnet-4-5", None),  # signed-in models first
    ("sonnet-4-5", {}, "amazon-bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0", None),
    ("anthropic/claude-sonnet-4-5", {"OPENCODE_API_KEY": "o"}, "anthropic/claude-sonnet-4-5", None),
])
def test_an_id_several_providers_have_is_the_signed_in_ones(tmp_path, pattern, env, key, level):
    found = registry(tmp_path, env=env).resolve(pattern)
    assert (found.model.key, found.thinking_level) == (key, level)


@pytest.mark.parametrize("pattern,env,listed,why", [
    ("claude-sonnet-4-5", {}, "anthropic/claude-sonnet-4-5, cloudflare-ai-gateway/claude-sonnet-4-5, "
     "opencode/claude-sonnet-4-5, radius/claude-sonnet-4-5", "No matching provider is authenticated"),
    ("claude-sonnet-4-5:high", {"ANTHROPIC_API_KEY": "a", "OPENCODE_API_KEY": "o"},
     "anthropic/claude-sonnet-4-5, cloudflare-ai-gateway/claude-sonnet-4-5, opencode/claude-sonnet-4-5, "
     "radius/claude-sonnet-4-5", "More than one matching provider is authenticated"),
    ("sonnet-4-5", {"ANTHROPIC_API_KEY": "a", "OPENCODE_API_KEY": "o"},
     "anthropic/claude-sonnet-4-5, opencode/claude-sonnet-4-5", "More than one matching provider is authenticated"),
    ("gpt-4.1", {}, "azure/gpt-4.1, cloudflare-ai-gateway/gpt-4.1, openai/gpt-4.1",
     "No matching provider is authenticated"),
])
def test_an_id_several_providers_have_stops_unless_exactly_one_is_signed_in(tmp_path, pattern, env, listed, why):
    """pi 1.6's words (checked side by side in tests/providers/test_ambiguous_model.py)."""
    with pytest.raises(AmbiguousModelError) as stopped:
        registry(tmp_path, env=env).resolve(pattern)
    assert str(stopped.value) == (f'Model "{pattern}" is ambiguous across providers: {listed}. {why}. '
                                  "Use --provider or provider/model.")
    assert registry(tmp_path, env=env).resolve(pattern, provider="opencode").model.provider == "opencode"


def test_provider_flag_limits_the_search_and_unknown_ids_become_custom_models(tmp_path):
    reg = registry(tmp_path)
    assert reg.resolve("llama-3.3", provider="groq").model.key == "groq/llama-3.3-70b-versatile"
    assert reg.resolve("groq/llama-3.3-70b-versatile", provider="groq").model.provider == "groq"
    custom = reg.resolve("openai/gpt-99")
    assert custom.model.key == "openai/gpt-99" and custom.model.api == "openai-responses"
    assert "not found" in custom.warning
    with pytest.raises(ModelNotFoundError, match="--list-models"):
        reg.resolve("no-such-model-anywhere")
    with pytest.raises(ModelNotFoundError, match='Unknown provider "nope"'):
        reg.resolve("x", provider="nope")


def test_models_json_models_resolve_by_name_too(tmp_path, llm_server):
    reg = registry(tmp_path, llm_server.models_json("local", "openai-completions",
                                                    [{"id": "qwen2.5-coder:7b", "name": "Qwen Coder Local"}]))
    assert reg.resolve("qwen2.5-coder:7b").model.key == "local/qwen2.5-coder:7b"
    found = reg.resolve("local/qwen2.5-coder:7b:high")
    assert (found.model.id, found.thinking_level) == ("qwen2.5-coder:7b", "high")
    assert reg.resolve("Coder Local").model.id == "qwen2.5-coder:7b"


def test_search_is_fuzzy_and_the_table_lists_what_matters(tmp_path):
    reg = registry(tmp_path, env={"ANTHROPIC_API_KEY": "k"})
    found = reg.search("sonnet 45")
    assert found and all("sonnet" in m.id for m in found)
    assert found[0].id.startswith("claude-sonnet-4-5")
    assert reg.search("zzzz-nothing") == []
    everything = reg.search("")
    assert everything == sorted(everything, key=lambda m: (m.provider, m.id))
    table = model_table([reg.find("anthropic", "claude-sonnet-4-5")]).splitlines()
    assert table[0].split() == ["provider", "model", "context", "max-out", "thinking", "images"]
    assert table[1].split() == ["anthropic", "claude-sonnet-4-5", "200K", "64K", "yes", "yes"]


def test_an_empty_registry_says_so(tmp_path):
    with pytest.raises(ModelNotFoundError, match="No models"):
        ModelRegistry([], agent_dir=tmp_path, env={}).resolve("x")
    assert isinstance(Model(id="a", provider="b", api="c").key, str)


def test_a_later_plugins_model_of_the_same_key_replaces_the_earlier(tmp_path):
    from pi_core import Plugins, hookimpl

    class First:
        @hookimpl
        def register_models(self):
            return [Model(id="m", provider="p", api="a", name="first"), Model(id="n", provider="p", api="a")]

    class Second:
        @hookimpl
        def register_models(self):
            return [Model(id="m", provider="p", api="a", name="second")]

    plugins = Plugins()
    plugins.register(First(), "first")
    plugins.register(Second(), "second")
    registry = asyncio.run(ModelRegistry.from_plugins(plugins, agent_dir=tmp_path, env={}))
    assert [(m.key, m.name) for m in registry.models] == [("p/m", "second"), ("p/n", "")]


# ---------------------------------------------------------------- registered at run time (pi's registerProvider)


def test_a_registered_provider_replaces_a_built_in_ones_models_until_unregistered(tmp_path):
    reg = registry(tmp_path, models_json={"providers": {"anthropic": {"modelOverrides": {
        "claude-sonnet-4-5": {"name": "Sonnet as I named it"}}}}})
    built = {m.id for m in reg.models if m.provider == "anthropic"}
    reg.register_provider("anthropic", {"base_url": "http://127.0.0.1:9/v1", "api_key": "K",
                                        "api": "openai-completions", "models": [{"id": "mine", "context_window": 999}]})
    [mine] = [m for m in reg.models if m.provider == "anthropic"]
    assert (mine.id, mine.api, mine.context_window, reg.api_key(mine)) == ("mine", "openai-completions", 999, "K")
    assert reg.unregister_provider("anthropic") is True
    assert {m.id for m in reg.models if m.provider == "anthropic"} == built
    assert reg.find("anthropic", "claude-sonnet-4-5").name == "Sonnet as I named it"  # models.json's too
    assert reg.registered == {}


def test_a_registered_base_url_re_points_a_built_in_provider_and_merges_with_a_later_one(tmp_path):
    reg = registry(tmp_path)
    reg.register_provider("anthropic", {"baseUrl": "http://127.0.0.1:9"})
    reg.register_provider("anthropic", {"headers": {"X-Team": "blue"}})  # merged into the first
    sonnet = reg.find("anthropic", "claude-sonnet-4-5")
    assert (sonnet.base_url, sonnet.headers) == ("http://127.0.0.1:9", {"X-Team": "blue"})
    reg.unregister_provider("anthropic")
    assert reg.find("anthropic", "claude-sonnet-4-5").base_url == "https://api.anthropic.com"


@pytest.mark.parametrize("config, reason", [
    ({"models": [{"id": "x"}], "api_key": "K", "api": "openai-completions"}, '"baseUrl" is required'),
    ({"models": [{"id": "x"}], "base_url": "http://127.0.0.1:9", "api": "openai-completions"}, '"apiKey" is required'),
    ({"models": [{"id": "x"}], "base_url": "http://127.0.0.1:9", "api_key": "K"}, 'no "api"'),
])
def test_a_bad_registration_is_refused_and_changes_nothing(tmp_path, config, reason):
    reg = registry(tmp_path)
    before = list(reg.models)
    with pytest.raises(ValueError, match=reason):
        reg.register_provider("brand-new", config)
    assert reg.models == before and reg.registered == {}



def test_the_catalogue_gives_every_field_of_a_model_in_the_models_order():
    """The catalogue builds its ~1,700 models by position (keyword calls cost a start as
    much as the models): the order it gives is ``Model``'s, all of it, and the fields it
    leaves to their defaults come out as the defaults."""
    import attrs

    from pi_core.protocol.model import Model
    from pi_plugins.providers.catalogue import _FIELDS

    assert tuple(a.name for a in attrs.fields(Model)) == _FIELDS
    model = next(m for m in builtin_models() if m.provider == "anthropic")
    assert (model.discovered, model.sampling_params, model.sampling_params_by_thinking_level) == (False, None, None)
    assert model.api == "anthropic-messages" and model.api_key_envs and model.bearer_env == "ANTHROPIC_AUTH_TOKEN"


def test_the_catalogues_image_limits_are_what_the_models_json_reader_makes_of_them():
    """The catalogue takes ``inputLimits.images.resize`` as its data has it, skipping the
    reader's checks on every start: this keeps that shortcut honest for every model."""
    import orjson

    from pi_plugins.models.models_json import image_resize
    from pi_plugins.providers.catalogue import CATALOGUE

    raw = {f"{name}/{m['id']}": m.get("inputLimits")
           for name, provider in orjson.loads(CATALOGUE.read_bytes())["providers"].items()
           for m in provider["models"]}
    built = {m.key: m.image_resize for m in builtin_models()}
    assert sum(v is not None for v in built.values()) > 1000
    assert built == {key: image_resize(limits) for key, limits in raw.items()}
