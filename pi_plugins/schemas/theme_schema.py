"""A theme file's schema (``themes/*.json``): pi 1.6's form, every colour token it
names. The tokens the chat paints with come from :mod:`pi_plugins.interactive.themes`;
the others are accepted and not used here. A token left out takes the built-in theme's
colour of the same appearance, so none is required."""

from __future__ import annotations

from typing import Any

from pi_plugins.schemas.types import STRING, described, either, integer, map_of, obj, one_of

#: pi 1.6's tokens the chat does not paint with (its scrollbar, search, syntax colours …).
UNUSED_TOKENS = (
    "userMessageText", "customMessageText", "mdQuoteBorder", "scrollbarTrack", "scrollbarThumb", "searchMatchBg",
    "searchMatchText", "syntaxComment", "syntaxKeyword", "syntaxFunction", "syntaxVariable", "syntaxString",
    "syntaxNumber", "syntaxType", "syntaxOperator", "syntaxPunctuation", "thinkingMax",
)


def theme_schema() -> dict[str, Any]:
    from pi_plugins.interactive.themes import THINKING_TOKENS, TOKENS

    color = {"$ref": "#/$defs/color"}
    used = [*TOKENS, *THINKING_TOKENS, "bashMode"]
    tokens = {token: color for token in used}
    tokens.update({token: described(color, "Accepted; pi-harness does not use it.")
                   for token in UNUSED_TOKENS if token not in tokens})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "pi theme",
        "type": "object",
        "required": ["name", "colors"],
        "properties": {
            "$schema": described(STRING, "The schema this file follows (for editors)."),
            "name": {"type": "string", "pattern": "^[^/]+$"},
            "appearance": one_of("dark", "light"),
            "vars": described(map_of(color), "Named colours the tokens may refer to."),
            "colors": obj(tokens, closed=True),
            "export": obj({"pageBg": color, "cardBg": color, "infoBg": color}, closed=True,
                          description="Colours of /export's HTML page."),
        },
        "additionalProperties": False,
        "$defs": {"color": either(
            described(STRING, '"#rrggbb", "#rgb", oklch(…), okhsl(…), a var name, or "" for the default.'),
            described(integer(0, 255), "A 256-colour palette index."))},
    }
