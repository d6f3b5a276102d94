"""JSON Schemas of pi's configuration files, published with the package as pi 1.6
publishes its own (``schemas/`` in its npm package; ``$schema`` URLs under
``https://pi.dev/schemas/``), for editors to validate and complete the files.

Each schema is made from this project's own definitions (the keybinding ids and their
defaults, the theme tokens the chat paints with, the resize fields models.json takes, and
the settings and models.json fields listed in :mod:`.settings_schema` and
:mod:`.models_schema`) by :func:`build`; the files beside this module are its output, and a test
keeps them the same. A file that names a schema in ``$schema`` is read as any other: the
key is accepted and ignored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
#: pi 1.6's ``$schema`` URL for each file (what a user's file names).
URLS = {name: f"https://pi.dev/schemas/{name}.schema.json" for name in ("keybindings", "settings", "models", "theme")}


def keybindings_schema() -> dict[str, Any]:
    """keybindings.json: each action id to a key or a list of keys (none: unbound)."""
    from pi_plugins.interactive.keybindings import DEFAULTS

    def described(keys: tuple[str, ...]) -> str:
        return f"Default: {', '.join(keys)}." if keys else "Unbound by default."

    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "pi keybindings.json",
        "type": "object",
        "properties": {
            "$schema": {"type": "string", "description": "The schema this file follows (for editors)."},
            **{action: {"$ref": "#/$defs/keys", "description": described(keys)}
               for action, keys in DEFAULTS.items()},
        },
        "additionalProperties": {"$ref": "#/$defs/keys"},
        "$defs": {"keys": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
                           "description": "A key (\"ctrl+k\", \"alt+enter\", \"escape\") or a list of keys."}},
    }


def _settings() -> dict[str, Any]:
    from pi_plugins.schemas.settings_schema import settings_schema

    return settings_schema()


def _models() -> dict[str, Any]:
    from pi_plugins.schemas.models_schema import models_schema

    return models_schema()


def _theme() -> dict[str, Any]:
    from pi_plugins.schemas.theme_schema import theme_schema

    return theme_schema()


BUILDERS = {"keybindings": keybindings_schema, "settings": _settings, "models": _models, "theme": _theme}


def build(name: str) -> dict[str, Any]:
    return BUILDERS[name]()


def path_of(name: str) -> Path:
    return HERE / f"{name}.schema.json"


def write_all() -> None:
    """Regenerate the published files (``python -c "import pi_plugins.schemas as s; s.write_all()"``)."""
    for name in BUILDERS:
        path_of(name).write_text(json.dumps(build(name), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
