"""Helpers for tests that drive the built-in providers directly."""

import asyncio

from pi_core.protocol.messages import AssistantMessage
from pi_core.protocol.provider import StreamOptions
from pi_plugins.providers.anthropic import AnthropicProvider
from pi_plugins.providers.azure_openai import AzureOpenAIProvider
from pi_plugins.providers.bedrock import BedrockProvider
from pi_plugins.providers.google import GoogleProvider
from pi_plugins.providers.google_vertex import GoogleVertexProvider
from pi_plugins.providers.openai_completions import OpenAICompletionsProvider
from pi_plugins.providers.mistral import MistralProvider
from pi_plugins.providers.openai_codex import OpenAICodexProvider
from pi_plugins.providers.openai_responses import OpenAIResponsesProvider

def codex_token(key: str) -> str:
    """A ChatGPT sign-in's token (a JWT naming an account) that ends with a test's key,
    so the tests' checks of keys in headers and errors hold for Codex too."""
    import base64
    import json

    def part(value):
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")
    claims = {"https://api.openai.com/auth": {"chatgpt_account_id": "acct-test"}}
    return f"{part({'alg': 'none'})}.{part(claims)}.{key or 'local'}"


class SignedInCodex(OpenAICodexProvider):
    """The Codex provider as a ChatGPT sign-in uses it: the shared tests' plain keys (or
    none) become a sign-in's token, which ChatGPT's backend always takes."""

    def build_request(self, model, context, options):
        if (options.api_key or "").count(".") != 2:
            import attrs
            options = attrs.evolve(options, api_key=codex_token(options.api_key or ""))
        return super().build_request(model, context, options)


class KeyedVertex(GoogleVertexProvider):
    """Vertex with an API key when a shared test gives none (else it would look for
    Google Cloud's application-default credentials)."""

    def build_request(self, model, context, options):
        if not options.api_key:
            import attrs
            options = attrs.evolve(options, api_key="vertex-test-key")
        return super().build_request(model, context, options)


PROVIDERS = {p.api: p for p in (OpenAICompletionsProvider(), OpenAIResponsesProvider(),
                                AnthropicProvider(), GoogleProvider(), SignedInCodex(),
                                MistralProvider(), AzureOpenAIProvider(), KeyedVertex(),
                                BedrockProvider())}


async def collect(model, context, options=None):
    """Every event of one request, and the final message. Without ``options`` the
    provider does not retry by itself, so a scripted failure is what the request gets."""
    provider = PROVIDERS[model.api]
    options = options or StreamOptions(api_key="test-key", max_retries=0)
    events = [e async for e in provider.stream(model, context, options)]
    last = events[-1]
    message: AssistantMessage = last.message if last.type == "done" else last.error
    return events, message


def run(coroutine):
    return asyncio.run(coroutine)
