"""Azure OpenAI (pi 1.6's ``azure`` provider): the resource's Responses endpoint with the
key in api-key, and its Foundry models' chat completions, as pi sends them."""

import pytest
from support.llm_server import Reply
from support.provider_streams import collect, run

from pi_core.protocol.messages import TextContent, UserMessage
from pi_core.protocol.provider import LlmContext, StreamOptions
from pi_plugins.providers.azure_openai import base_url
from pi_plugins.providers.catalogue import builtin_models


def azure(model_id="gpt-4.1"):
    return next(m for m in builtin_models() if m.key == f"azure/{model_id}")


def test_the_base_url_comes_from_the_environment_as_pi_makes_it(monkeypatch):
    monkeypatch.delenv("AZURE_OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("AZURE_OPENAI_RESOURCE_NAME", "acme")
    assert base_url(azure()) == "https://acme.openai.azure.com/openai/v1"
    monkeypatch.setenv("AZURE_OPENAI_BASE_URL", "https://acme.cognitiveservices.azure.com/")
    assert base_url(azure()) == "https://acme.cognitiveservices.azure.com/openai/v1"
    monkeypatch.setenv("AZURE_OPENAI_BASE_URL", "https://acme.services.ai.azure.com/openai/v1/responses")
    assert base_url(azure()) == "https://acme.services.ai.azure.com/openai/v1"  # Foundry's, as pi 1.6
    monkeypatch.delenv("AZURE_OPENAI_BASE_URL")
    monkeypatch.delenv("AZURE_OPENAI_RESOURCE_NAME")
    with pytest.raises(ValueError, match="AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME"):
        base_url(azure())


def test_a_deployment_map_names_the_model_sent(llm_server, monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_BASE_URL", f"{llm_server.url}/openai/v1")
    monkeypatch.setenv("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", "gpt-4o=prod-4o, gpt-4.1=team-41")
    llm_server.push(Reply(text="ok"))
    message = run(collect(azure(), LlmContext(messages=[UserMessage(content=[TextContent("Hi")])]),
                          StreamOptions(api_key="az-key", max_retries=0)))[1]
    assert message.text == "ok", message.error_message
    [request] = llm_server.requests
    assert request.path == "/openai/v1/responses" and request.query == {"api-version": ["v1"]}
    assert request.headers["api-key"] == "az-key" and "authorization" not in request.headers
    assert request.body["model"] == "team-41"


def test_a_foundry_model_goes_to_the_resources_chat_completions_under_its_deployment(llm_server, monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_BASE_URL", f"{llm_server.url}/openai/v1")
    monkeypatch.setenv("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", "deepseek-v4-pro=ds-prod")
    model = azure("deepseek-v4-pro")
    assert model.api == "openai-completions"
    llm_server.push(Reply(text="ok"))
    message = run(collect(model, LlmContext(messages=[UserMessage(content=[TextContent("Hi")])]),
                          StreamOptions(api_key="az-key", max_retries=0)))[1]
    assert message.text == "ok", message.error_message
    [request] = llm_server.requests
    assert request.path == "/openai/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer az-key" and request.body["model"] == "ds-prod"


@pytest.mark.process
@pytest.mark.requires("pi16")
@pytest.mark.parametrize("model", ["gpt-4.1", "deepseek-v4-pro"])
def test_the_azure_request_matches_pi_16s(tmp_path, llm_server, model):
    from support.side_by_side import requests_of_both

    pi, ours = requests_of_both(tmp_path, llm_server, f"azure/{model}", real="pi16",
                                env={"AZURE_OPENAI_API_KEY": "az-key",
                                     "AZURE_OPENAI_BASE_URL": f"{llm_server.url}/openai/v1"})
    assert (ours.path, ours.query) == (pi.path, pi.query)
    for header in ("api-key", "authorization"):
        assert ours.headers.get(header) == pi.headers.get(header)
    skip = ("input", "messages", "tools", "prompt_cache_key")
    assert {k: v for k, v in ours.body.items() if k not in skip} == {k: v for k, v in pi.body.items() if k not in skip}
