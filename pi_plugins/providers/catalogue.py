"""The built-in model catalogue: the main models of OpenAI, Anthropic and Google, with
entries for OpenRouter, Groq, DeepSeek, Mistral and xAI (``catalogue.json``, in
models.json's schema plus each provider's ``apiKeyEnv``; facts from pi's catalogue).

Users add or override models in ``<agent dir>/models.json``; the registry applies it on
top of what this plugin registers.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from pi_core import hookimpl
from pi_core.protocol.model import Model
from pi_core.app.models_json import models_from_config

CATALOGUE = Path(__file__).with_name("catalogue.json")


@lru_cache(maxsize=1)
def _catalogue() -> tuple[Model, ...]:
    models, _ = models_from_config(json.loads(CATALOGUE.read_text(encoding="utf-8")), env={})
    return tuple(models)


def builtin_models() -> list[Model]:
    """Fresh copies, so a caller may change them."""
    import attrs

    return [attrs.evolve(m) for m in _catalogue()]


@hookimpl
def register_models():
    return builtin_models()
