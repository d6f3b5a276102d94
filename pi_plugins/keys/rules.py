"""Keys stay out of the model's reach: the environment of every command leaves them
out, and their values are redacted from what the tools give back.

Two things, both read by the plugins that run commands and show their output:

- :func:`command_environment`: the environment a command (the bash tool, ``!cmd``,
  ``ctx.exec``, a subagent's tools, pi-sandbox) starts with. It leaves out the variables
  that hold a key pi resolved for a provider (``OPENAI_API_KEY``, or a variable
  ``models.json`` or ``auth.json`` names as the key), and every variable whose name
  matches ``*KEY*``, ``*SECRET*``, ``*TOKEN*`` or ``*PASSWORD*`` (glob patterns on names,
  case-insensitive). The setting ``toolEnvironment`` changes that: ``{"include":
  ["AWS_*", "GH_TOKEN"], "exclude": ["MY_CORP_*"]}``; a name ``include`` matches always
  stays.
- :func:`redact`: text with the value of every key pi holds replaced by
  ``[redacted: NAME]``, NAME being the variable or the provider the key belongs to. The
  keys are those of every live :class:`pi_plugins.models.registry.ModelRegistry`
  (:func:`pi_plugins.models.registry.live_registries`: ``--api-key``,
  ``auth.json``, the provider variables, ``models.json``), and the values of the
  variables the patterns above name. Values shorter than :data:`MIN_REDACTED`
  characters are left alone: ``TOKENIZERS_PARALLELISM=false`` must not turn every
  "false" in a file into a redaction. Secrets a plugin holds that are no provider's key
  (``pi serve``'s token) are added with :func:`hold_secret`.

The keys are the process's, as the registries are: a subagent, the SDK and ``pi`` itself
share them.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping
from typing import Any

#: Variable names left out of every command's environment unless ``include`` names them.
HIDDEN_BY_DEFAULT = ("*KEY*", "*SECRET*", "*TOKEN*", "*PASSWORD*")
#: Values shorter than this are not redacted (they would mangle ordinary text).
MIN_REDACTED = 8
SETTING = "toolEnvironment"


def matches(name: str, patterns: Iterable[str]) -> bool:
    """Whether a variable name matches one of the glob patterns, whatever the case."""
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern.upper()) for pattern in patterns)


# ---------------------------------------------------------------- the setting


def tool_environment(settings: Any) -> tuple[list[str], list[str], list[str]]:
    """``toolEnvironment``'s ``include`` and ``exclude`` patterns, and what is wrong with
    the setting, worded for the user. A bad value fails closed: a bad ``include`` brings
    nothing back."""
    value = settings.get(SETTING) if settings is not None else None
    if value is None:
        return [], [], []
    if not isinstance(value, dict):
        return [], [], [f'"{SETTING}" must be an object like {{"include": ["GH_TOKEN"], '
                         f'"exclude": []}}, not {value!r}; the default is used']
    problems = [f'"{SETTING}": unknown key "{key}" (it takes "include" and "exclude")'
                for key in value if key not in ("include", "exclude")]
    lists = []
    for key in ("include", "exclude"):
        patterns = value.get(key, [])
        if not isinstance(patterns, list) or not all(isinstance(p, str) and p for p in patterns):
            problems.append(f'"{SETTING}.{key}" must be a list of variable-name patterns such as '
                            f'"AWS_*"; it is ignored')
            patterns = []
        lists.append(patterns)
    return lists[0], lists[1], problems


# ---------------------------------------------------------------- the environment


def key_variables() -> set[str]:
    """The variables that hold (or would hold) a key pi resolves for a provider."""
    from pi_plugins.models.registry import live_registries

    names: set[str] = set()
    for registry in live_registries():
        names |= registry.key_variables()
    return names


def command_environment(base: Mapping[str, str] | None = None, settings: Any = None) -> dict[str, str]:
    """``base`` (the process's environment) without the keys: the environment every
    command starts with (see the module's docstring)."""
    base = os.environ if base is None else base
    include, exclude, _ = tool_environment(settings)
    hidden = key_variables()
    patterns = (*HIDDEN_BY_DEFAULT, *exclude)
    return {name: value for name, value in base.items()
            if (include and matches(name, include))
            or not (name in hidden or matches(name, patterns))}


# ---------------------------------------------------------------- redaction


#: Secrets plugins hold that are no provider's key: value → name (:func:`hold_secret`).
_HELD_SECRETS: dict[str, str] = {}


def hold_secret(value: str, name: str) -> None:
    """Redact ``value`` as ``[redacted: NAME]`` from now on, like a provider's key."""
    if value:
        _HELD_SECRETS[value] = name


def release_secret(value: str) -> None:
    _HELD_SECRETS.pop(value, None)


def held_keys(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every key pi holds, value → the name it goes by (a variable or a provider)."""
    env = os.environ if env is None else env
    found: dict[str, str] = {}
    for name, value in env.items():
        if value and matches(name, HIDDEN_BY_DEFAULT):
            found.setdefault(value, name)
    from pi_plugins.models.registry import live_registries

    for registry in live_registries():
        for value, name in registry.held_keys():
            found[value] = name  # the registry knows whose it is
    found.update(_HELD_SECRETS)
    return {value: name for value, name in found.items() if len(value) >= MIN_REDACTED}


def redact(text: str, keys: Mapping[str, str] | None = None) -> str:
    """``text`` with every held key's value replaced by ``[redacted: NAME]`` (longest
    first, so a key inside another is not left half-shown)."""
    if not text:
        return text
    keys = held_keys() if keys is None else keys
    for value in sorted(keys, key=len, reverse=True):
        if value in text:
            text = text.replace(value, f"[redacted: {keys[value]}]")
    return text
