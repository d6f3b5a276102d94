"""The compaction's token settings as pi 1.6 reads them: ``compaction.reserveTokens`` and
``compaction.keepRecentTokens``, each overridden per model by
``compaction.modelOverrides["provider/id"]``, must be non-negative whole numbers. A value
of another type (``"16384"``, ``1.5``, ``-1``, ``true``) is not guessed at: it stops with
pi 1.6's own message, where 1.6 stops (and at start-up, before anything is sent, where
1.6 sends the first request and then stops)."""

from __future__ import annotations

from typing import Any

#: pi 1.6's defaults.
DEFAULTS = {"reserveTokens": 16384, "keepRecentTokens": 20000}

#: JavaScript's Number.MAX_SAFE_INTEGER: pi 1.6 takes "safe integers" only.
_SAFE = 2**53 - 1


class InvalidTokenSetting(ValueError):
    """A compaction token setting of the wrong type, in pi 1.6's words."""


def _whole(value: Any) -> bool:
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # JSON's 16384.0 is the number 16384 to pi
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _SAFE


def token_setting(settings: Any, field: str, model_key: str | None) -> int:
    """``field``'s tokens for the model ``provider/id``: its override, else the setting,
    else pi's default; raises :class:`InvalidTokenSetting` for a value of another type."""
    ordinary = settings.get(f"compaction.{field}")
    if ordinary is not None and not _whole(ordinary):
        raise InvalidTokenSetting(f"Invalid compaction.{field} setting: {_js(ordinary)}. "
                                  "Expected a non-negative safe integer.")
    overrides = settings.get("compaction.modelOverrides")
    entry = overrides.get(model_key) if isinstance(overrides, dict) and model_key is not None else None
    if entry is not None and not isinstance(entry, dict):
        raise InvalidTokenSetting(f'Invalid compaction.modelOverrides["{model_key}"] setting: {_js(entry)}. '
                                  "Expected an object.")
    override = entry.get(field) if entry is not None else None
    if override is not None and not _whole(override):
        raise InvalidTokenSetting(f'Invalid compaction.modelOverrides["{model_key}"].{field} setting: '
                                  f"{_js(override)}. Expected a non-negative safe integer.")
    chosen = override if override is not None else ordinary
    return int(chosen) if chosen is not None else DEFAULTS[field]


def problems(settings: Any, model_key: str | None) -> list[str]:
    """What is wrong with the token settings for this model, one line each."""
    found = []
    for field in DEFAULTS:
        try:
            token_setting(settings, field, model_key)
        except InvalidTokenSetting as exc:
            found.append(str(exc))
    return found


def _js(value: Any) -> str:
    """A value as pi 1.6's message shows it (JavaScript's ``String(value)``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "[object Object]"
    if isinstance(value, list):
        return ",".join(_js(v) for v in value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def fit_budget(tokens: int, context_window: int) -> int:
    """A compaction budget (``reserveTokens``, ``keepRecentTokens``) that fits the model:
    at most a quarter of its window. The defaults (16384, 20000) are sized for large
    windows; unclamped, an 8k local model would compact an empty conversation before its
    first answer (pi's ``window - reserve`` is negative there) and keep everything it
    meant to summarise."""
    return min(tokens, max(context_window // 4, 1))
