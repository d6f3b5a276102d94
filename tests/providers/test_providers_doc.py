"""docs/providers.md names every provider of the catalogue and how to sign in or set its key."""

import json
import re
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_every_provider_and_its_key_variable_is_in_the_providers_doc():
    doc = (ROOT / "docs" / "providers.md").read_text()
    section = doc[doc.index("## Every provider"):doc.index("## Signing in")]
    named = set(re.findall(r"`([a-z0-9-]+)`", section))
    named |= {f"xiaomi-token-plan{suffix}" for suffix in re.findall(r"`(-[a-z]+)`", section)}
    catalogue = json.loads((ROOT / "pi_plugins" / "providers" / "catalogue.json").read_text())["providers"]
    assert set(catalogue) - named == set()
    for provider in catalogue.values():
        if provider.get("apiKeyEnv"):
            assert f"`{provider['apiKeyEnv']}`" in section, provider["name"]
