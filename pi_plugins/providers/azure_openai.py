"""Azure OpenAI (``azure-openai-responses``): the Responses API of an Azure resource.

pi 1.6 names the provider ``azure`` (0.73.1: ``azure-openai-responses``, its API's name);
its Foundry models use chat completions (``openai-completions``) on the same resource and
deployment, which the completions provider takes from here. As pi sends it: to ``AZURE_OPENAI_BASE_URL``, else
``https://<AZURE_OPENAI_RESOURCE_NAME>.openai.azure.com/openai/v1`` (an Azure host's bare
URL gets ``/openai/v1``), ``/responses?api-version=<AZURE_OPENAI_API_VERSION or v1>``,
the key in ``api-key`` (pi refuses to send none; we send none to a server on this
machine that needs none), the model as its deployment (``AZURE_OPENAI_DEPLOYMENT_NAME_MAP``,
``model=deployment,...``, else the model's id). The rest is ``openai-responses``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pi_core import hookimpl
from pi_core.protocol.model import Model
from pi_core.protocol.provider import LlmContext, StreamOptions
from pi_plugins.providers.http import HttpRequest, env_value
from pi_plugins.providers.openai_responses import OpenAIResponsesProvider

API = "azure-openai-responses"
PROVIDER = "azure"


def deployment(model: Model, options: Any = None) -> str:
    for entry in (env_value(options, "AZURE_OPENAI_DEPLOYMENT_NAME_MAP") or "").split(","):
        model_id, _, name = entry.strip().partition("=")
        if model_id.strip() == model.id and name.strip():
            return name.strip()
    return model.id


def base_url(model: Model, options: Any = None) -> str:
    url = (env_value(options, "AZURE_OPENAI_BASE_URL") or "").strip()
    resource = env_value(options, "AZURE_OPENAI_RESOURCE_NAME")
    if not url and resource:
        url = f"https://{resource}.openai.azure.com/openai/v1"
    if not url and model.base_url and not model.base_url.startswith("unset:"):
        url = model.base_url
    if not url:
        raise ValueError("Azure OpenAI base URL is required. Set AZURE_OPENAI_BASE_URL or "
                         "AZURE_OPENAI_RESOURCE_NAME (or give the model a baseUrl in models.json).")
    parts = urlsplit(url.strip().rstrip("/"))
    host = parts.hostname or ""
    path = parts.path.rstrip("/")
    if host.endswith((".openai.azure.com", ".cognitiveservices.azure.com", ".ai.azure.com")) and \
            path in ("", "/openai", "/openai/v1/responses"):
        parts = parts._replace(path="/openai/v1", query="")
    return urlunsplit(parts).rstrip("/")


class AzureOpenAIProvider(OpenAIResponsesProvider):
    api = API

    def error_prefix(self, provider: str) -> str:
        return "Azure OpenAI API error"  # pi 1.6's, whatever the provider is called

    def build_request(self, model: Model, context: LlmContext, options: StreamOptions) -> HttpRequest:
        request = super().build_request(model, context, options)
        key = options.api_key or env_value(options, "AZURE_OPENAI_API_KEY")
        request.headers.pop("authorization", None)
        if key:  # none for a gateway on this machine (pi insists on one)
            request.headers["api-key"] = key
        version = env_value(options, "AZURE_OPENAI_API_VERSION") or "v1"
        request.url = f"{base_url(model, options)}/responses?api-version={version}"
        body = request.body
        body["model"] = deployment(model, options)  # and ``store: false``, which pi 1.6 sends (0.73.1 left it out)
        return request


@hookimpl
def register_providers():
    return [AzureOpenAIProvider()]
