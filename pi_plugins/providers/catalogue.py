"""The built-in model catalogue: every provider and model of pi 0.73.1
(``catalogue.json``, in models.json's schema plus each provider's ``apiKeyEnv``;
``scripts/regenerate_catalogue.py`` writes it from pi's package).

Users add or override models in ``<agent dir>/models.json``; the registry applies it on
top of what this plugin registers.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import orjson

from pi_core import hookimpl
from pi_core.app.models_json import models_from_config
from pi_core.protocol.model import Model

CATALOGUE = Path(__file__).with_name("catalogue.json")


#: The base URL of a provider that has none in the catalogue (Azure: its provider takes
#: the resource from the environment when a request is made). Not empty: an empty base
#: URL means an in-process provider, which needs no key.
NO_BASE_URL = "unset://from-the-environment"


@lru_cache(maxsize=1)
def _catalogue() -> tuple[Model, ...]:
    document = orjson.loads(CATALOGUE.read_bytes())  # a third of json.loads's time
    for provider in document["providers"].values():
        provider.setdefault("baseUrl", NO_BASE_URL)
    models, _ = models_from_config(document, env={})
    return tuple(models)


def builtin_models() -> list[Model]:
    """The catalogue's models, built once per process and shared: a caller changes one
    with ``attrs.evolve``, as the registry applies models.json (a copy of all ~1,000 on
    every call cost as much again as building them)."""
    return list(_catalogue())


@hookimpl
def register_models():
    return builtin_models()
