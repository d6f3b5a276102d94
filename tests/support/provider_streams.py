"""Helpers for tests that drive the built-in providers directly."""

import asyncio

from pi_core.protocol.messages import AssistantMessage
from pi_core.protocol.provider import StreamOptions
from pi_plugins.providers.anthropic import AnthropicProvider
from pi_plugins.providers.google import GoogleProvider
from pi_plugins.providers.openai_completions import OpenAICompletionsProvider
from pi_plugins.providers.openai_responses import OpenAIResponsesProvider

PROVIDERS = {p.api: p for p in (OpenAICompletionsProvider(), OpenAIResponsesProvider(),
                                AnthropicProvider(), GoogleProvider())}


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
