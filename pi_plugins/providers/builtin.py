"""The built-in providers as plugins, one per wire API (``pi_core.app.builtins`` names
each ``pi_plugins.providers.builtin:NAME``): each registers its provider by its api, and
the module that speaks that api is imported on the provider's first use. A start imports
only the providers it sends to, not all ten (a fifth of ``pi -p``'s plugin imports).

The modules themselves stay plugins too (their own ``register_providers``), for a test or
an SDK user who registers one directly.
"""

from __future__ import annotations

import importlib
import inspect
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


class Builtin:
    """The plugin of one built-in provider: ``api``, spoken by class ``provider`` of
    ``module``; a session that is left is forgotten there, if it was ever imported."""

    def __init__(self, api: str, module: str, provider: str, *, settings: bool = False) -> None:
        self.api, self.module, self.provider, self.settings = api, module, provider, settings

    def make(self, ctx: Any) -> Any:
        made = getattr(importlib.import_module(self.module), self.provider)
        return made(getattr(ctx, "settings", None)) if self.settings else made()

    @hookimpl
    def register_providers(self, ctx):
        return [Deferred(self.api, lambda: self.make(ctx))]

    @hookimpl
    async def session_shutdown(self, ctx):
        """The module's own ``session_shutdown`` (Anthropic's threads, Codex's sockets):
        nothing to forget before its first request."""
        module = sys.modules.get(self.module)
        forget = getattr(module, "session_shutdown", None)
        if forget is not None and inspect.isawaitable(done := forget(ctx)):
            await done


openai_completions = Builtin("openai-completions", "pi_plugins.providers.openai_completions",
                             "OpenAICompletionsProvider")
openai_responses = Builtin("openai-responses", "pi_plugins.providers.openai_responses", "OpenAIResponsesProvider")
anthropic_messages = Builtin("anthropic-messages", "pi_plugins.providers.anthropic", "AnthropicProvider")
google_generative_ai = Builtin("google-generative-ai", "pi_plugins.providers.google", "GoogleProvider")
openai_codex_responses = Builtin("openai-codex-responses", "pi_plugins.providers.openai_codex",
                                 "OpenAICodexProvider", settings=True)
mistral_conversations = Builtin("mistral-conversations", "pi_plugins.providers.mistral", "MistralProvider")
azure_openai_responses = Builtin("azure-openai-responses", "pi_plugins.providers.azure_openai",
                                 "AzureOpenAIProvider")
google_vertex = Builtin("google-vertex", "pi_plugins.providers.google_vertex", "GoogleVertexProvider")
bedrock_converse_stream = Builtin("bedrock-converse-stream", "pi_plugins.providers.bedrock", "BedrockProvider")
pi_messages = Builtin("pi-messages", "pi_plugins.providers.pi_messages", "PiMessagesProvider")
