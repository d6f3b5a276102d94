"""Cloudflare's AI Gateway takes its key in ``cf-aig-authorization``, as pi 0.73.1 sends
it over each of the gateway's three APIs, and no provider key header; checked
in-process and against the real pi's requests to the same local server (pi runs with
``support/node/provider_origins.mjs``, which applies PI_PROVIDER_ORIGINS to its fetch)."""

import json

import pytest
from support.llm_server import Reply
from support.provider_streams import run

from pi_core.protocol.messages import TextContent, UserMessage
from pi_core.protocol.provider import LlmContext, StreamOptions
from pi_plugins.providers.anthropic import AnthropicProvider
from pi_plugins.providers.catalogue import builtin_models
from pi_plugins.providers.openai_completions import OpenAICompletionsProvider
from pi_plugins.providers.openai_responses import OpenAIResponsesProvider

MODELS = {"anthropic-messages": "claude-haiku-4-5", "openai-responses": "gpt-4o",
          "openai-completions": "workers-ai/@cf/meta/llama-3.3-70b-instruct-fp8-fast"}
PROVIDERS = {"anthropic-messages": AnthropicProvider(), "openai-responses": OpenAIResponsesProvider(),
             "openai-completions": OpenAICompletionsProvider()}
ENV = {"CLOUDFLARE_API_KEY": "cf-key", "CLOUDFLARE_ACCOUNT_ID": "acct-1", "CLOUDFLARE_GATEWAY_ID": "gw-1"}


@pytest.fixture
def gateway(llm_server, monkeypatch):
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PI_PROVIDER_ORIGINS", json.dumps({"https://gateway.ai.cloudflare.com": llm_server.url}))
    return llm_server


def model(api):
    return next(m for m in builtin_models() if m.provider == "cloudflare-ai-gateway" and m.id == MODELS[api])


@pytest.mark.parametrize("api", list(MODELS))
def test_the_gateway_key_goes_in_its_own_header_and_no_provider_key_is_sent(gateway, api):
    gateway.push(Reply(text="via the gateway"))

    async def ask(headers=None):
        options = StreamOptions(api_key="cf-key", max_retries=0, headers=headers or {})
        events = [e async for e in PROVIDERS[api].stream(model(api), LlmContext(
            messages=[UserMessage(content=[TextContent("Hi")])]), options)]
        return events[-1]

    last = run(ask())
    assert last.type == "done", last.error.error_message
    [request] = gateway.requests
    assert request.path.startswith("/v1/acct-1/gw-1/")
    assert request.headers["cf-aig-authorization"] == "Bearer cf-key"
    assert "authorization" not in request.headers and "x-api-key" not in request.headers
    gateway.push(Reply(text="again"))
    run(ask({"Authorization": "Bearer upstream"}))  # a header of the request's own still goes
    assert gateway.requests[-1].headers["authorization"] == "Bearer upstream"


#: What the gateway needs and both programs must send alike.
COMPARED = ("cf-aig-authorization", "authorization", "x-api-key", "anthropic-dangerous-direct-browser-access",
            "anthropic-version", "accept", "content-type")


@pytest.mark.process
@pytest.mark.requires("pi")
@pytest.mark.parametrize("api", list(MODELS))
def test_the_gateway_request_matches_the_real_pis(tmp_path, llm_server, api):
    from support.side_by_side import requests_of_both

    pi, ours = requests_of_both(tmp_path, llm_server, f"cloudflare-ai-gateway/{MODELS[api]}", env=ENV,
                                origins={"https://gateway.ai.cloudflare.com": llm_server.url})
    assert ours.path == pi.path
    assert {h: ours.headers.get(h) for h in COMPARED} == {h: pi.headers.get(h) for h in COMPARED}
