"""PI_PROVIDER_ORIGINS: requests meant for a provider's origin go to another one (a test
server, a corporate gateway) with their path, query and body unchanged."""

import attrs
import pytest
from support.llm_server import Reply
from support.provider_streams import collect, run

from pi_core.protocol.messages import TextContent, UserMessage
from pi_core.protocol.provider import LlmContext
from pi_plugins.providers.origins import OriginsError, rewrite

CONTEXT = LlmContext(system_prompt="Be brief.", messages=[UserMessage(content=[TextContent("Hi")])])


def test_each_api_reaches_the_origin_the_variable_maps_its_public_origin_to(llm_server, api, monkeypatch):
    origin = "https://api.example-provider.com"
    monkeypatch.setenv("PI_PROVIDER_ORIGINS", f'{{"{origin}": "{llm_server.url}"}}')
    llm_server.push(Reply(text="Local."))
    served = llm_server.model(api)
    model = attrs.evolve(served, base_url=origin + served.base_url[len(llm_server.url):])
    message = run(collect(model, CONTEXT))[1]
    assert message.text == "Local.", message.error_message
    [request] = llm_server.requests
    assert request.headers["host"] == llm_server.url.split("//")[1]


def test_path_query_and_fragment_are_kept_and_unmapped_origins_untouched():
    env = {"PI_PROVIDER_ORIGINS": '{"https://claude.ai": "http://127.0.0.1:9", "https://GitHub.com:443/": "http://[::1]:7"}'}
    assert rewrite("https://claude.ai/oauth/authorize?code=true&state=x#f", env) == \
        "http://127.0.0.1:9/oauth/authorize?code=true&state=x#f"
    assert rewrite("https://github.com/login/device/code", env) == "http://[::1]:7/login/device/code"
    assert rewrite("https://api.github.com/copilot_internal/v2/token", env) == \
        "https://api.github.com/copilot_internal/v2/token"
    assert rewrite("https://claude.ai:8443/x", env) == "https://claude.ai:8443/x"
    assert rewrite("https://claude.ai/x", {}) == "https://claude.ai/x"


@pytest.mark.parametrize("value", ['["https://a.b"]', "{not json", '{"https://a.b": "ftp://c"}',
                                   '{"nonsense": "http://127.0.0.1:1"}'])
def test_a_malformed_variable_is_a_clear_error(value):
    with pytest.raises(OriginsError, match="PI_PROVIDER_ORIGINS"):
        rewrite("https://a.b/x", {"PI_PROVIDER_ORIGINS": value})


def test_a_malformed_variable_ends_the_stream_with_an_error_naming_it(llm_server, monkeypatch):
    monkeypatch.setenv("PI_PROVIDER_ORIGINS", "{broken")
    message = run(collect(llm_server.model("openai-completions"), CONTEXT))[1]
    assert message.stop_reason == "error" and "PI_PROVIDER_ORIGINS" in message.error_message
    assert llm_server.requests == []


def test_a_base_url_naming_a_variable_takes_it_from_the_environment(llm_server, monkeypatch):
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", "acct-7")
    served = llm_server.model("openai-completions")
    model = attrs.evolve(served, base_url=served.base_url + "/accounts/{CLOUDFLARE_ACCOUNT_ID}/ai/v1")
    llm_server.push(Reply(text="ok"))
    assert run(collect(model, CONTEXT))[1].text == "ok"
    assert llm_server.requests[0].path == "/v1/accounts/acct-7/ai/v1/chat/completions"
    monkeypatch.delenv("CLOUDFLARE_ACCOUNT_ID")
    message = run(collect(model, CONTEXT))[1]
    assert message.stop_reason == "error" and "CLOUDFLARE_ACCOUNT_ID" in message.error_message
