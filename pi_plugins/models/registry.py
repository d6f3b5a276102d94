"""The model registry: the models plugins register, the user's ``models.json`` over them,
model patterns resolved, and the key for each request, looked up as pi does: ``--api-key``,
auth.json, the environment (``api_key_env``, else ``<PROVIDER>_API_KEY``), models.json's
``apiKey``; calls to a model through the plugins' providers (:mod:`pi_plugins.models.calls`).
Keys never appear in reprs, errors or logs."""

from __future__ import annotations

import importlib
import inspect
import os
import re
import weakref
from collections.abc import Coroutine, Iterable, Mapping
from pathlib import Path
from typing import Any, cast

import attrs

from pi_core.paths import agent_dir as default_agent_dir
from pi_core.protocol.model import Model
from pi_core.protocol.provider import THINKING_LEVELS
from pi_core.protocol.records import record
from pi_plugins.models.auth import AuthStorage, resolve_config_value
from pi_plugins.models.calls import ModelCalls
from pi_plugins.models.models_json import ProviderConfig, load_models_json, models_from_config


class ModelNotFoundError(LookupError):
    """No model matches a pattern; the message says how to list them."""


class AmbiguousModelError(ModelNotFoundError):
    """An id several providers have, and not exactly one of them signed in (pi 1.6)."""


@record
class Resolution:
    model: Model
    #: The level a ``:level`` suffix asked for (``None``: none given).
    thinking_level: str | None = None
    warning: str | None = None


def _is_local(url: str) -> bool:
    return bool(re.match(r"^https?://(localhost|127\.\d+\.\d+\.\d+|\[::1\]|0\.0\.0\.0)(:|/|$)", url))


#: Every model registry alive in this process (weakly held): whose keys there are.
_live: weakref.WeakSet[Any] = weakref.WeakSet()


def live_registries() -> list[Any]:
    """The model registries alive now (``pi``'s, a subagent's, the SDK's), whose keys the
    ``keys`` plugin keeps out of commands and redacts; the shell holds no such policy."""
    return list(_live)


class ModelRegistry(ModelCalls):
    def __init__(
        self,
        models: Iterable[Model] = (),
        *,
        agent_dir: str | os.PathLike | None = None,
        env: Mapping[str, str] | None = None,
        models_json: bool = True,
    ):
        self.builtin = list(models)
        self.agent_dir = Path(agent_dir) if agent_dir is not None else default_agent_dir()
        self.env = os.environ if env is None else env
        self.auth = AuthStorage(self.agent_dir / "auth.json")
        self.use_models_json = models_json
        #: Problems with models.json or auth.json, worded for the user.
        self.errors: list[str] = []
        self.models: list[Model] = []
        self._settings: dict[str, ProviderConfig] = {}
        self._runtime_keys: dict[str, str] = {}
        #: Providers plugins registered while running (``register_provider``), by name,
        #: in pi's ProviderConfig shape; applied over the built-in models and models.json.
        self.registered: dict[str, dict] = {}
        #: Keys (``provider/id``) of the models found on servers by ``discover_models``.
        self.local: set[str] = set()
        #: Virtual models registered while running (``register_virtual_model``), by key.
        self.virtual: dict[str, Model] = {}
        self.refresh()
        _live.add(self)  # its keys are redacted and kept out of commands while it lives

    @classmethod
    async def from_plugins(cls, plugins: Any, ctx: Any = None, **kwargs: Any) -> ModelRegistry:
        """A registry of every model the plugins register (``register_models``); its
        auth.json store asks them for sign-ins (``register_sign_ins``) when it needs one."""
        models = await plugins.call("register_models", ctx=ctx)
        registry = cls([m for m in models if isinstance(m, Model)], **kwargs)

        async def sign_ins() -> dict:
            return {flow.id: flow for flow in await plugins.call("register_sign_ins", ctx=ctx)}

        registry.auth.sign_ins = sign_ins
        registry.call_plugins = plugins  # its providers answer stream_simple and complete
        return registry

    async def discover(self, plugins: Any, settings: Any = None, ctx: Any = None) -> list[Model]:
        """Ask the plugins for models on servers they find (``discover_models``) and add
        them as built-in ones, so models.json's overrides apply; returns the new ones."""
        found = await plugins.call("discover_models", settings=settings, ctx=ctx)
        added = [m for m in found if isinstance(m, Model) and self.find(m.provider, m.id) is None]
        if added:
            self.builtin.extend(added)
            self.local.update(m.key for m in added)
            self.refresh()
        return added

    def register_provider(self, name: str, config: Mapping[str, Any]) -> None:
        """pi's ``registerProvider``: ``models`` replace every model ``name`` had; only
        ``baseUrl``/``headers`` override its models'. Again for the same name merges.
        Keys as in models.json, or snake_case. Raises ValueError."""
        config = _camel_config(config)
        if config.get("models"):
            if not config.get("baseUrl"):
                raise ValueError(f'Provider {name}: "baseUrl" is required when defining models.')
            if not config.get("apiKey"):
                raise ValueError(f'Provider {name}: "apiKey" is required when defining models.')
        merged = {**self.registered.get(name, {}), **{k: v for k, v in config.items() if v is not None}}
        _apply_registration(name, merged, list(self.builtin), self.env)  # a bad config raises here
        self.registered[name] = merged
        self.refresh()

    def unregister_provider(self, name: str) -> bool:
        """pi's ``unregisterProvider``: a registered provider goes (the models it replaced
        come back); else the plugins' models of ``name`` leave, models.json's stay. False
        when there were none."""
        if self.registered.pop(name, None) is not None:
            self.refresh()
            return True
        kept = [m for m in self.builtin if m.provider != name]
        if len(kept) == len(self.builtin):
            return False
        self.builtin = kept
        self.local = {key for key in self.local if not key.startswith(f"{name}/")}
        self.refresh()
        return True

    def register_virtual_model(self, model: Model) -> None:
        """pi 1.6's ``registerVirtualModel`` while running: ``model`` (a ``pi_core.VirtualModel``)
        over any model of its key, until :meth:`unregister_virtual_model` (``unregister_provider``
        leaves it, as in pi). Raises ValueError for the key of a physical model."""
        if any(m.key == model.key and m.api != "virtual" for m in self.models):
            raise ValueError(f"Virtual model {model.key} conflicts with a physical model.")  # pi 1.6's words
        self.virtual[model.key] = model
        self.refresh()

    def unregister_virtual_model(self, provider: str, model_id: str) -> bool:
        if self.virtual.pop(f"{provider}/{model_id}", None) is None:
            return False
        self.refresh()
        return True

    def __repr__(self) -> str:
        return f"<ModelRegistry {len(self.models)} models, {len(self.providers)} providers>"

    def refresh(self) -> None:
        """Re-read models.json and auth.json (pi re-reads them when /model opens)."""
        self.errors = []
        self.auth.reload()
        if self.auth.error:
            self.errors.append(self.auth.error)
        models = list(self.builtin)
        settings: dict[str, ProviderConfig] = {}
        if self.use_models_json:
            path = self.agent_dir / "models.json"
            try:
                config = load_models_json(path)
                if config is not None:
                    models, settings = models_from_config(config, self.builtin, self.env)
            except ValueError as exc:
                self.errors.append(f"models.json ({path}): {exc}; only the built-in models are available")
                models, settings = list(self.builtin), {}
        for name, config in self.registered.items():
            models, extra = _apply_registration(name, config, models, self.env)
            settings.update(extra)
        if any(m.api == "virtual" for m in models):  # (none on most starts: no key to compare)
            models = importlib.import_module("pi_plugins.models.virtual").settle_virtual_models(models, self.errors)
        virtual, self._settings = self.virtual, settings
        self.models = [m for m in models if m.key not in virtual] + list(virtual.values()) if virtual else models

    # ------------------------------------------------------------ lookup

    @property
    def providers(self) -> list[str]:
        return list(dict.fromkeys(m.provider for m in self.models))

    def find(self, provider: str, model_id: str) -> Model | None:
        return next((m for m in self.models if m.provider == provider and m.id == model_id), None)

    def available(self) -> list[Model]:
        """Models that can be used now: a key is configured, or none is needed (a
        provider of models.json's own, or a server on this machine)."""
        env, stored = dict(self.env), set(self.auth.providers)  # one look at each, not one per model
        return [m for m in self.models if self.has_auth(m, env, stored)]

    # ------------------------------------------------------------ keys

    def set_runtime_key(self, provider: str, key: str) -> None:
        """A key for this run only (``--api-key``), above every other source."""
        self._runtime_keys[provider] = key

    def env_var(self, model: Model, env: Mapping[str, str] | None = None) -> str:
        """The variable holding ``model``'s key: its own, else the first of its
        ``compat.apiKeyEnvFallbacks`` that is set (pi 1.6's Qwen Token Plan reads a per-plan
        variable, then the one its plans used to share), else ``<PROVIDER>_API_KEY``."""
        env = self.env if env is None else env
        primary = model.api_key_env or re.sub(r"[^A-Z0-9]", "_", model.provider.upper()) + "_API_KEY"
        if not env.get(primary):
            for name in (model.compat or {}).get("apiKeyEnvFallbacks") or ():
                if env.get(name):
                    return name
        return primary

    def key_env_vars(self, model: Model, env: Mapping[str, str] | None = None) -> list[str]:
        """The variables that may hold ``model``'s key, first set wins: the model's
        ``api_key_envs`` where its provider reads several (pi 1.6's Anthropic:
        ``ANTHROPIC_OAUTH_TOKEN`` then ``ANTHROPIC_API_KEY``), else :meth:`env_var`."""
        return list(model.api_key_envs) if model.api_key_envs else [self.env_var(model, env)]

    def _env_key(self, model: Model, env: Mapping[str, str]) -> tuple[str, str] | None:
        for name in self.key_env_vars(model, env):
            if env.get(name):
                return name, env[name]
        return None

    def bearer_token(self, model: Model, env: Mapping[str, str] | None = None,
                     stored: set[str] | None = None) -> tuple[str, str] | None:
        """(variable, token) of a bearer token the environment gives in place of a key
        (``bearer_env``: pi 1.6's ``ANTHROPIC_AUTH_TOKEN``), sent as
        ``Authorization: Bearer`` with no key; a key given on the command line or stored
        in auth.json wins over it, and it over the key variables."""
        env = self.env if env is None else env
        name = model.bearer_env
        if not name or not env.get(name):
            return None
        if model.provider in self._runtime_keys or self._stored(model.provider, stored):
            return None
        return name, env[name]

    def _stored(self, provider: str, stored: set[str] | None) -> bool:
        """auth.json holds ``provider``: ``stored`` is its providers, read once for a
        walk over every model (None: look now)."""
        return self.auth.has(provider) if stored is None else provider in stored

    def key_source(self, model: Model, env: Mapping[str, str] | None = None,
                   stored: set[str] | None = None) -> str | None:
        """Where the key for ``model`` would come from (never the key itself); ``env``
        and ``stored`` (auth.json's providers) are given by a walk over every model."""
        env = self.env if env is None else env
        if model.provider in self._runtime_keys:
            return "--api-key"
        if self._stored(model.provider, stored):
            return "auth.json"
        found = self.bearer_token(model, env, stored) or self._env_key(model, env)
        if found:
            return f"environment ({found[0]})"
        if (self._settings.get(model.provider) or ProviderConfig()).api_key:
            return "models.json"
        compat = model.compat or {}
        files = compat.get("credentialsFiles") or {}
        for group in compat.get("credentialsEnv") or ():  # a cloud's own credentials
            if group and all(self._credential(name, files, env) for name in group):
                return f"environment ({', '.join(group)})"
        return None

    def _credential(self, name: str, files: dict, env: Mapping[str, str]) -> bool:
        """A variable of a cloud's credentials is set; one of ``credentialsFiles`` (as
        ``GOOGLE_APPLICATION_CREDENTIALS``, with gcloud's default file when unset) counts
        when its file exists (pi's rule)."""
        value = env.get(name)
        if name not in files:
            return bool(value)
        path = value or files[name]
        if path.startswith("~/"):
            path = os.path.join(env.get("HOME") or os.path.expanduser("~"), path[2:])
        return os.path.isfile(path)

    def key_variables(self) -> set[str]:
        """The environment variables that hold, or would hold, a provider's key (each
        model's, and those auth.json and models.json name), for the ``keys`` plugin."""
        names = {name for m in self.models for name in self.key_env_vars(m)}
        names.update(m.bearer_env for m in self.models if m.bearer_env)
        names.update(n for m in self.models for n in (m.compat or {}).get("apiKeyEnvFallbacks") or ())
        named = [entry.get("key") for entry in self.auth._data.values() if isinstance(entry, dict)]
        named += [config.api_key for config in self._settings.values()]
        names.update(v for v in named if isinstance(v, str) and v and not v.startswith("!")
                     and self.env.get(v))
        return names

    def held_keys(self) -> list[tuple[str, str]]:
        """(key, whose: a provider or variable) of every key held without running a
        command, for redaction (the ``keys`` plugin)."""
        found = [(key, provider) for provider, key in self._runtime_keys.items() if key]
        for provider, key, variable in self.auth.held(self.env):
            found.append((key, variable or provider))
        for variable in sorted(self.key_variables()):
            value = self.env.get(variable)
            if value:
                found.append((value, variable))
        for provider, config in self._settings.items():
            if config.api_key:
                value = resolve_config_value(config.api_key, self.env, run=False)
                if value:
                    found.append((value, config.api_key if self.env.get(config.api_key) else provider))
        return found

    def has_auth(self, model: Model, env: Mapping[str, str] | None = None,
                 stored: set[str] | None = None) -> bool:
        """A key is configured, or none is needed: a provider of models.json's own, a
        server on this machine, or no base URL (an in-process provider)."""
        env = self.env if env is None else env
        if model.api == "virtual":  # pi 1.6: usable when its provider's physical models are
            physical = next((m for m in self.models if m.provider == model.provider and m.api != "virtual"), None)
            return physical is None or self.has_auth(physical, env, stored)
        settings = self._settings.get(model.provider)
        required = (model.compat or {}).get("requiredEnv") or ()
        if not all(env.get(name) for name in required):  # Cloudflare's account and gateway ids
            return False
        return (self.key_source(model, env, stored) is not None
                or (settings is not None and settings.custom)
                or not model.base_url or _is_local(model.base_url) or model.key in self.local)

    def api_key(self, model: Model) -> Any:
        """The key for a request to ``model`` (``None``: send none); an expired sign-in
        gives an awaitable that refreshes it (the loop awaits what this returns)."""
        key = self._runtime_keys.get(model.provider)
        if key:
            return key
        if self.auth.needs_refresh(model.provider):
            return self.auth.refreshed_key(model.provider)
        key = self.auth.api_key(model.provider, self.env)
        if key:
            return key
        if self.bearer_token(model):
            return None  # the token goes in the Authorization header (request_headers)
        found = self._env_key(model, self.env)
        if found:
            return found[1]
        configured = (self._settings.get(model.provider) or ProviderConfig()).api_key
        return resolve_config_value(configured, self.env) if configured else None

    def request_headers(self, model: Model) -> dict[str, str]:
        """Extra headers for a request: models.json's ``authHeader`` adds a bearer token,
        as does a bearer token from the environment (:meth:`bearer_token`)."""
        bearer = self.bearer_token(model)
        if bearer:
            return {"Authorization": f"Bearer {bearer[1]}"}
        settings = self._settings.get(model.provider)
        if settings is not None and settings.auth_header:
            key = self.api_key(model)
            if inspect.isawaitable(key):  # a sign-in's refresh: its token is the key itself
                cast(Coroutine, key).close()  # refreshed_key's coroutine, never awaited
                key = None
            if key:
                return {"Authorization": f"Bearer {key}"}
        return {}

    def request_env(self, model: Model) -> dict[str, str]:
        """The ``env`` object of the provider's auth.json key (pi 1.6): variables that
        take priority over the process environment for that provider's requests."""
        if model.provider in self._runtime_keys:
            return {}
        return self.auth.env(model.provider)

    # ------------------------------------------------------------ patterns

    def resolve(self, pattern: str, provider: str | None = None) -> Resolution:
        """The model ``--model`` (and ``--provider``) means, as pi resolves it:
        ``provider/id``, an id, or part of one (aliases before dated versions), each with
        an optional ``:<thinking level>``; an unknown id of a known provider becomes a
        custom model (with a warning). Raises :class:`ModelNotFoundError`."""
        models = self.models
        if not models:
            raise ModelNotFoundError("No models available. Add models to models.json or install a provider plugin.")
        providers = {m.provider.lower(): m.provider for m in models}
        chosen = providers.get(provider.lower()) if provider else None
        if provider and chosen is None:
            raise ModelNotFoundError(f'Unknown provider "{provider}". Use --list-models to see available providers/models.')
        text, inferred = pattern, False
        if chosen is None and "/" in pattern:
            head, _, rest = pattern.partition("/")
            if head.lower() in providers:
                chosen, text, inferred = providers[head.lower()], rest, True
        if chosen is None:
            exact = _exact_id_or_key(pattern, models)
            if exact is not None and exact.key.lower() == pattern.strip().lower():
                return Resolution(exact)
        if provider and chosen and pattern.lower().startswith(chosen.lower() + "/"):
            text = pattern[len(chosen) + 1:]
        candidates = [m for m in models if m.provider == chosen] if chosen else models
        found = _parse_pattern(text, candidates) if chosen else self._resolve_anywhere(text, models)
        if found is not None:
            return found
        if inferred:
            exact = _exact_id_or_key(pattern, models)
            if exact is not None:
                return Resolution(exact)
            found = _parse_pattern(pattern, models)
            if found is not None:
                return found
        if chosen:
            base = next(m for m in models if m.provider == chosen)
            compat = {k: v for k, v in (base.compat or {}).items() if k != "requestModel"} or None
            return Resolution(
                attrs.evolve(base, id=text, name=text, compat=compat),
                warning=f'Model "{text}" not found for provider "{chosen}". Using custom model id.',
            )
        shown = f"{chosen}/{text}" if chosen else pattern
        raise ModelNotFoundError(f'Model "{shown}" not found. Use --list-models to see available models.')

    def _resolve_anywhere(self, text: str, models: list[Model]) -> Resolution | None:
        """A pattern without a provider, as pi 1.6 resolves it: an id several providers
        have is the one signed-in (keyed) provider's; other patterns look among the
        signed-in providers' models first. Where that leaves more than one provider, or an
        exact id none is signed in to, it stops rather than guess."""
        env, stored = dict(self.env), set(self.auth.providers)
        keyed = [m for m in models if self.has_auth(m, env, stored)]
        exact = _exact_id(text, models)
        if exact is not None:
            model_id, level = exact
            same = [m for m in models if m.id.lower() == model_id]
            signed = [m for m in same if m in keyed]
            if len({m.provider for m in same}) < 2 or len(signed) == 1:
                return Resolution((signed or same)[0], level)
            raise _ambiguous(text, same, signed)
        found = _parse_pattern(text, keyed)
        if found is None:
            return _parse_pattern(text, models)
        same = [m for m in keyed if m.id == found.model.id]
        if len({m.provider for m in same}) > 1:
            raise _ambiguous(text, same, same)
        return found

    def search(self, query: str = "", models: Iterable[Model] | None = None) -> list[Model]:
        """Models matching every word of ``query`` fuzzily (in "provider id"), best first;
        all of them, sorted by provider and id, for an empty query."""
        pool = list(self.available() if models is None else models)
        words = query.split()
        if not words:
            return sorted(pool, key=lambda m: (m.provider, m.id))
        scored = []
        for model in pool:
            text = f"{model.provider} {model.id}"
            total = 0.0
            for word in words:
                score = fuzzy_score(word, text)
                if score is None:
                    break
                total += score
            else:
                scored.append((total, model))
        scored.sort(key=lambda pair: pair[0])
        return [model for _, model in scored]


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _camel_config(config: Mapping[str, Any]) -> dict:
    """A provider config with pi's key names (``base_url`` → ``baseUrl``), its models' too."""
    if not isinstance(config, Mapping):
        raise ValueError("a provider config must be a dict")
    found = {_camel(k): v for k, v in config.items()}
    if isinstance(found.get("models"), list):
        found["models"] = [{_camel(k): v for k, v in m.items()} if isinstance(m, Mapping) else m
                           for m in found["models"]]
    return found


def _apply_registration(name: str, config: dict, models: list[Model],
                        env: Mapping[str, str]) -> tuple[list[Model], dict[str, ProviderConfig]]:
    """``models`` with a registered provider applied, as pi's ``applyProviderConfig``."""
    if config.get("models"):
        models = [m for m in models if m.provider != name]
    return models_from_config({"providers": {name: config}}, models, env)


def _exact_id_or_key(pattern: str, models: list[Model]) -> Model | None:
    lower = pattern.strip().lower()
    for model in models:
        if model.id.lower() == lower or model.key.lower() == lower:
            return model
    return None


def _exact_id(text: str, models: list[Model]) -> tuple[str, str | None] | None:
    """(the lower-case id, the ``:level`` asked for) when ``text`` is a model's whole id."""
    lower = text.strip().lower()
    ids = {m.id.lower() for m in models}
    if lower in ids:
        return lower, None
    prefix, colon, level = lower.rpartition(":")
    return (prefix, level) if colon and level in THINKING_LEVELS and prefix in ids else None


def _ambiguous(pattern: str, same: list[Model], signed: list[Model]) -> AmbiguousModelError:
    names = ", ".join(sorted(m.key for m in same))
    why = "More than one matching provider is authenticated" if signed else "No matching provider is authenticated"
    return AmbiguousModelError(f'Model "{pattern}" is ambiguous across providers: {names}. {why}. '
                               "Use --provider or provider/model.")


def _exact_reference(reference: str, models: list[Model]) -> Model | None:
    reference = reference.strip()
    if not reference:
        return None
    lower = reference.lower()
    matches = [m for m in models if m.key.lower() == lower]
    if matches:
        return matches[0] if len(matches) == 1 else None
    if "/" in reference:
        provider, _, model_id = reference.partition("/")
        matches = [m for m in models if m.provider.lower() == provider.strip().lower()
                   and m.id.lower() == model_id.strip().lower()]
        if matches:
            return matches[0] if len(matches) == 1 else None
    matches = [m for m in models if m.id.lower() == lower]
    return matches[0] if len(matches) == 1 else None


def _is_alias(model_id: str) -> bool:
    return model_id.endswith("-latest") or not re.search(r"-\d{8}$", model_id)


def _match(pattern: str, models: list[Model]) -> Model | None:
    exact = _exact_reference(pattern, models)
    if exact is not None:
        return exact
    lower = pattern.lower()
    matches = [m for m in models if lower in m.id.lower() or lower in (m.name or "").lower()]
    if not matches:
        return None
    aliases = [m for m in matches if _is_alias(m.id)]
    pool = aliases or matches
    return max(pool, key=lambda m: m.id)


def _parse_pattern(pattern: str, models: list[Model]) -> Resolution | None:
    """``pattern`` as a model, else ``prefix:<thinking level>`` (ids may hold colons)."""
    model = _match(pattern, models)
    if model is not None:
        return Resolution(model)
    prefix, colon, suffix = pattern.rpartition(":")
    if not colon or suffix not in THINKING_LEVELS:
        return None
    inner = _parse_pattern(prefix, models)
    if inner is None:
        return None
    return Resolution(inner.model, None if inner.warning else suffix, inner.warning)


def fuzzy_score(query: str, text: str) -> float | None:
    """Lower is better; ``None`` when the query's letters do not all appear in order.
    Word starts and consecutive letters score best (as pi's model picker)."""
    result = _fuzzy(query.lower(), text.lower())
    if result is not None:
        return result
    swapped = re.match(r"^([a-z]+)([0-9]+)$", query.lower()) or re.match(r"^([0-9]+)([a-z]+)$", query.lower())
    if swapped:
        result = _fuzzy(swapped.group(2) + swapped.group(1), text.lower())
        if result is not None:
            return result + 5
    return None


def _fuzzy(query: str, text: str) -> float | None:
    if not query:
        return 0.0
    if len(query) > len(text):
        return None
    at, score, last, run = 0, 0.0, -1, 0
    for i, char in enumerate(text):
        if at == len(query):
            break
        if char != query[at]:
            continue
        if last == i - 1:
            run += 1
            score -= run * 5
        else:
            run = 0
            if last >= 0:
                score += (i - last - 1) * 2
        if i == 0 or text[i - 1] in " -_./:":
            score -= 10
        score += i * 0.1
        last = i
        at += 1
    if at < len(query):
        return None
    return score - 100 if query == text else score
