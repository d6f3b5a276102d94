"""The built-in providers as plugins, one per wire API (``pi_core.app.builtins`` names
each ``pi_plugins.providers.builtin:Class``): each registers its provider by its api, and
the module that speaks that api is imported on the provider's first use. A start imports
only the providers it sends to, not all ten (a fifth of ``pi -p``'s plugin imports).

The modules themselves stay plugins too (their own ``register_providers``), for a test or
an SDK user who registers one directly.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

from pi_core import hookimpl


class Deferred:
    """A provider known by its ``api`` until something else of it is asked for: then its
    module is imported and the provider made, and every attribute is the provider's."""

    def __init__(self, api: str, make: Callable[[], Any]) -> None:
        self.api = api
        self._make = make
        self._provider: Any = None

    def __getattr__(self, name: str) -> Any:  # (only what is not set above)
        if name.startswith("__"):
            raise AttributeError(name)
        if self._provider is None:
            self._provider = self._make()
        return getattr(self._provider, name)

    def __repr__(self) -> str:
        return f"<provider {self.api}{'' if self._provider is not None else ' (not imported yet)'}>"


class _Builtin:
    """One built-in provider: ``api``, spoken by ``Class`` in ``module``."""

    api = ""
    module = ""
    provider = ""

    def make(self, ctx: Any) -> Any:
        return getattr(importlib.import_module(self.module), self.provider)()

    @hookimpl
    def register_providers(self, ctx):
        return [Deferred(self.api, lambda: self.make(ctx))]


class OpenAICompletions(_Builtin):
    api, module, provider = "openai-completions", "pi_plugins.providers.openai_completions", "OpenAICompletionsProvider"


class OpenAIResponses(_Builtin):
    api, module, provider = "openai-responses", "pi_plugins.providers.openai_responses", "OpenAIResponsesProvider"


class AnthropicMessages(_Builtin):
    api, module, provider = "anthropic-messages", "pi_plugins.providers.anthropic", "AnthropicProvider"

    @hookimpl
    def session_shutdown(self, ctx):
        """As the module's own: a left session's thread and strict-tool state are forgotten."""
        module = sys.modules.get(self.module)  # nothing to forget before its first request
        if module is not None:
            module.session_shutdown(ctx)


class GoogleGenerativeAI(_Builtin):
    api, module, provider = "google-generative-ai", "pi_plugins.providers.google", "GoogleProvider"


class OpenAICodexResponses(_Builtin):
    api, module, provider = "openai-codex-responses", "pi_plugins.providers.openai_codex", "OpenAICodexProvider"

    def make(self, ctx: Any) -> Any:
        return importlib.import_module(self.module).OpenAICodexProvider(getattr(ctx, "settings", None))

    @hookimpl
    async def session_shutdown(self, ctx):
        """As the module's own: a left session's kept WebSocket is closed."""
        module = sys.modules.get(self.module)  # no socket before its first request
        if module is not None:
            await module.session_shutdown(ctx)


class MistralConversations(_Builtin):
    api, module, provider = "mistral-conversations", "pi_plugins.providers.mistral", "MistralProvider"


class AzureOpenAIResponses(_Builtin):
    api, module, provider = "azure-openai-responses", "pi_plugins.providers.azure_openai", "AzureOpenAIProvider"


class GoogleVertex(_Builtin):
    api, module, provider = "google-vertex", "pi_plugins.providers.google_vertex", "GoogleVertexProvider"


class BedrockConverseStream(_Builtin):
    api, module, provider = "bedrock-converse-stream", "pi_plugins.providers.bedrock", "BedrockProvider"


class PiMessages(_Builtin):
    api, module, provider = "pi-messages", "pi_plugins.providers.pi_messages", "PiMessagesProvider"
