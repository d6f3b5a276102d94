"""The built-in provider plugins register each provider by its api and import the module
that speaks it on the provider's first use: the api each names is its provider's own."""

import sys

import pytest

from pi_core.app.builtins import BUILTINS
from pi_plugins.providers import builtin

PROVIDER_PLUGINS = {name: location.partition(":")[2] for name, location in BUILTINS.items()
                    if location.startswith("pi_plugins.providers.builtin:")}


def test_every_wire_api_has_a_built_in_provider_plugin():
    assert len(PROVIDER_PLUGINS) == 10


@pytest.mark.parametrize("name", sorted(PROVIDER_PLUGINS))
def test_a_built_in_provider_plugin_names_the_api_its_provider_speaks(name):
    plugin = getattr(builtin, PROVIDER_PLUGINS[name])
    [provider] = plugin.register_providers(ctx=None)
    assert callable(provider.stream)  # the first use: the module is imported, the provider made
    assert plugin.module in sys.modules
    assert provider.api == type(provider._provider).api
    assert repr(provider) == f"<provider {provider.api}>"


def test_a_deferred_provider_is_made_once_and_only_when_used():
    made = []

    class Speaker:
        api = "x-api"
        flavour = "plain"

    provider = builtin.Deferred("x-api", lambda: made.append(1) or Speaker())
    assert provider.api == "x-api" and made == []
    assert "not imported yet" in repr(provider)
    assert provider.flavour == "plain" and provider.flavour == "plain"
    assert made == [1]
    with pytest.raises(AttributeError):
        provider.missing  # noqa: B018  (an attribute the provider lacks is still an AttributeError)
