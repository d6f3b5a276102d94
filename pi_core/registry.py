"""The model registry: the models plugins offer, the user's ``models.json`` on top, the
key for each request, and model patterns resolved.

Generic by design: it knows no provider. Models come from the ``register_models`` hook
(the built-in catalogue is one such plugin); ``<agent dir>/models.json`` (pi's schema)
adds providers and models, overrides base URLs, headers, ``compat`` and single model
fields. Keys are looked up in this order: ``--api-key`` (:meth:`ModelRegistry.set_runtime_key`),
``<agent dir>/auth.json``, the environment (the model's ``api_key_env``, else
``<PROVIDER>_API_KEY``), the provider's ``apiKey`` in models.json. A value in auth.json or
models.json may be ``!command`` (its output), the name of an environment variable (its
value) or the key itself. Models without a key are fine for local servers.

Keys never appear in reprs, errors or logs.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

import attrs
from attrs import define, field

from pi_core.model import Model, ModelCost
from pi_core.paths import agent_dir as default_agent_dir
from pi_core.provider import THINKING_LEVELS


class ModelNotFoundError(LookupError):
    """No model matches a pattern; the message says how to list them."""


@define
class Resolution:
    model: Model
    #: The level a ``:level`` suffix asked for (``None``: none given).
    thinking_level: str | None = None
    warning: str | None = None


# ---------------------------------------------------------------- config values

_command_cache: dict[str, str | None] = {}


def resolve_config_value(value: str, env: Mapping[str, str] | None = None) -> str | None:
    """``!command`` → its trimmed output (run once per process); the name of a set
    environment variable → its value; anything else → itself."""
    env = os.environ if env is None else env
    if value.startswith("!"):
        if value not in _command_cache:
            import subprocess

            try:
                done = subprocess.run(value[1:], shell=True, capture_output=True, text=True, timeout=10)
                output = done.stdout.strip() if done.returncode == 0 else ""
            except (OSError, subprocess.TimeoutExpired):
                output = ""
            _command_cache[value] = output or None
        return _command_cache[value]
    return env.get(value) or value


def _strip_json_comments(text: str) -> str:
    """models.json may hold ``//`` comments and trailing commas, as pi allows."""
    text = re.sub(r'"(?:\\.|[^"\\])*"|//[^\n]*', lambda m: m.group(0) if m.group(0)[0] == '"' else "", text)
    return re.sub(r'"(?:\\.|[^"\\])*"|,(\s*[}\]])', lambda m: m.group(1) if m.group(1) is not None else m.group(0), text)


# ---------------------------------------------------------------- auth.json


class AuthStorage:
    """``<agent dir>/auth.json``: ``{"<provider>": {"type": "api_key", "key": "..."}}``.
    Written atomically, created with mode 0600 in a 0700 folder."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.error: str | None = None
        self._data: dict[str, Any] = {}
        self.reload()

    def __repr__(self) -> str:
        return f"<AuthStorage {self.path} providers={sorted(self._data)}>"

    def reload(self) -> None:
        self.error = None
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            self._data = {}
            return
        except OSError as exc:
            self._data, self.error = {}, f"cannot read {self.path}: {exc.strerror}"
            return
        try:
            data = json.loads(text) if text.strip() else {}
        except ValueError as exc:  # say where, never what (the file holds secrets)
            self._data, self.error = {}, f"{self.path} is not valid JSON (line {exc.lineno}); it was ignored"
            return
        self._data = data if isinstance(data, dict) else {}

    @property
    def providers(self) -> list[str]:
        return list(self._data)

    def has(self, provider: str) -> bool:
        return isinstance(self._data.get(provider), dict)

    def api_key(self, provider: str, env: Mapping[str, str] | None = None) -> str | None:
        entry = self._data.get(provider)
        if not isinstance(entry, dict):
            return None
        if entry.get("type") == "oauth":  # a token from pi's /login; usable until it expires
            expires = entry.get("expires")
            access = entry.get("access")
            if isinstance(access, str) and (not isinstance(expires, (int, float)) or expires > time.time() * 1000):
                return access
            return None
        key = entry.get("key")
        return resolve_config_value(key, env) if isinstance(key, str) and key else None

    def set_api_key(self, provider: str, key: str) -> None:
        self.reload()
        if self.error:
            raise ValueError(f"{self.error}: fix or remove it before storing a key")
        data = dict(self._data)
        data[provider] = {"type": "api_key", "key": key}
        self._write(data)

    def remove(self, provider: str) -> None:
        self.reload()
        if provider in self._data:
            data = dict(self._data)
            del data[provider]
            self._write(data)

    def _write(self, data: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(json.dumps(data, indent=2))
                out.flush()
                os.fsync(out.fileno())
            os.chmod(temp, 0o600)
            os.replace(temp, self.path)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
        self._data = data


# ---------------------------------------------------------------- models.json


@define
class ProviderConfig:
    """What models.json says about a provider besides its models."""

    api_key: str | None = field(default=None, repr=False)
    headers: dict[str, str] | None = None
    auth_header: bool = False
    custom: bool = False  # defines models of its own


def _merge_compat(base: dict | None, override: dict | None) -> dict | None:
    if not override:
        return base
    merged = {**(base or {}), **override}
    for nested in ("openRouterRouting", "vercelGatewayRouting"):
        if (base or {}).get(nested) or override.get(nested):
            merged[nested] = {**((base or {}).get(nested) or {}), **(override.get(nested) or {})}
    return merged


def _cost(raw: dict | None, base: ModelCost | None = None) -> ModelCost:
    base = base or ModelCost()
    raw = raw or {}
    return ModelCost(
        input=raw.get("input", base.input), output=raw.get("output", base.output),
        cache_read=raw.get("cacheRead", base.cache_read), cache_write=raw.get("cacheWrite", base.cache_write),
    )


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


def _validate(config: Any) -> None:
    _check(isinstance(config, dict) and isinstance(config.get("providers"), dict),
           'the top level must be an object with a "providers" object')
    for name, provider in config["providers"].items():
        _check(isinstance(provider, dict), f"providers.{name} must be an object")
        for key in ("baseUrl", "apiKey", "api", "name"):
            _check(provider.get(key) is None or isinstance(provider[key], str) and provider[key] != "",
                   f"providers.{name}.{key} must be a non-empty string")
        for key in ("headers", "compat", "modelOverrides"):
            _check(provider.get(key) is None or isinstance(provider[key], dict), f"providers.{name}.{key} must be an object")
        models = provider.get("models", [])
        _check(isinstance(models, list), f"providers.{name}.models must be an array")
        for n, model in enumerate(models):
            where = f"providers.{name}.models[{n}]"
            _check(isinstance(model, dict), f"{where} must be an object")
            _check(isinstance(model.get("id"), str) and model["id"] != "", f"{where}.id must be a non-empty string")
            for key in ("contextWindow", "maxTokens"):
                value = model.get(key)
                _check(value is None or (isinstance(value, (int, float)) and value > 0),
                       f"{where}.{key} must be a positive number")
            _check(model.get("input") is None or (isinstance(model["input"], list) and
                   all(kind in ("text", "image") for kind in model["input"])),
                   f'{where}.input must be a list of "text" and "image"')


def models_from_config(
    config: dict, builtin: Iterable[Model] = (), env: Mapping[str, str] | None = None
) -> tuple[list[Model], dict[str, ProviderConfig]]:
    """Apply a models.json document (pi's schema) to ``builtin`` models: provider-level
    ``baseUrl``/``compat``/``headers`` overrides, ``modelOverrides``, and new or replacing
    ``models``. Returns all models and what each provider said about its key and headers.
    Raises :class:`ValueError` with the reason when the document does not fit the schema.

    The built-in catalogue uses the same schema, with ``apiKeyEnv`` per provider."""
    _validate(config)
    models = list(builtin)
    by_provider: dict[str, list[Model]] = {}
    for model in models:
        by_provider.setdefault(model.provider, []).append(model)
    settings: dict[str, ProviderConfig] = {}
    for name, provider in config["providers"].items():
        defs = provider.get("models") or []
        known = name in by_provider
        if defs and not known:
            _check(bool(provider.get("baseUrl")), f'provider {name}: "baseUrl" is required when defining models')
        elif not defs:
            _check(any(provider.get(k) for k in ("baseUrl", "headers", "compat", "modelOverrides")),
                   f'provider {name}: give "baseUrl", "headers", "compat", "modelOverrides" or "models"')
        headers = {k: resolve_config_value(v, env) or "" for k, v in (provider.get("headers") or {}).items()}
        settings[name] = ProviderConfig(api_key=provider.get("apiKey"), headers=headers or None,
                                        auth_header=bool(provider.get("authHeader")), custom=bool(defs) and not known)
        overrides = provider.get("modelOverrides") or {}
        for i, model in enumerate(models):
            if model.provider != name:
                continue
            changed = model
            if provider.get("baseUrl") or provider.get("compat") or headers:
                changed = attrs.evolve(
                    changed, base_url=provider.get("baseUrl") or changed.base_url,
                    compat=_merge_compat(changed.compat, provider.get("compat")),
                    headers={**(changed.headers or {}), **headers} or None,
                )
            override = overrides.get(model.id)
            if isinstance(override, dict):
                changed = _apply_override(changed, override, env)
            models[i] = changed
        defaults = by_provider.get(name, [None])[0]
        for n, raw in enumerate(defs):
            api = raw.get("api") or provider.get("api") or (defaults.api if defaults else None)
            _check(bool(api), f'provider {name}, model {raw["id"]}: no "api" (set it on the provider or the model)')
            base_url = raw.get("baseUrl") or provider.get("baseUrl") or (defaults.base_url if defaults else "")
            model_headers = {k: resolve_config_value(v, env) or "" for k, v in (raw.get("headers") or {}).items()}
            model = Model(
                id=raw["id"], provider=name, api=api, name=raw.get("name") or raw["id"], base_url=base_url,
                reasoning=bool(raw.get("reasoning", False)), input=list(raw.get("input") or ["text"]),
                cost=_cost(raw.get("cost")), context_window=int(raw.get("contextWindow") or 128_000),
                max_tokens=int(raw.get("maxTokens") or 16_384),
                headers={**headers, **model_headers} or None,
                compat=_merge_compat(provider.get("compat"), raw.get("compat")),
                thinking_level_map=raw.get("thinkingLevelMap"),
                api_key_env=raw.get("apiKeyEnv") or provider.get("apiKeyEnv"),
            )
            for i, existing in enumerate(models):
                if existing.provider == name and existing.id == model.id:
                    models[i] = model
                    break
            else:
                models.append(model)
    return models, settings


def _apply_override(model: Model, override: dict, env: Mapping[str, str] | None) -> Model:
    changes: dict[str, Any] = {}
    for key, attr in (("name", "name"), ("reasoning", "reasoning"), ("input", "input"),
                      ("contextWindow", "context_window"), ("maxTokens", "max_tokens")):
        if override.get(key) is not None:
            changes[attr] = override[key]
    if override.get("thinkingLevelMap") is not None:
        changes["thinking_level_map"] = {**(model.thinking_level_map or {}), **override["thinkingLevelMap"]}
    if override.get("cost"):
        changes["cost"] = _cost(override["cost"], model.cost)
    if override.get("headers"):
        resolved = {k: resolve_config_value(v, env) or "" for k, v in override["headers"].items()}
        changes["headers"] = {**(model.headers or {}), **resolved}
    changes["compat"] = _merge_compat(model.compat, override.get("compat"))
    return attrs.evolve(model, **changes)


def load_models_json(path: Path) -> dict | None:
    """The document at ``path`` (``None`` if there is none); raises :class:`ValueError`."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        return json.loads(_strip_json_comments(text))
    except ValueError as exc:
        raise ValueError(f"not valid JSON: {exc}") from None


# ---------------------------------------------------------------- the registry


def _is_local(url: str) -> bool:
    return bool(re.match(r"^https?://(localhost|127\.\d+\.\d+\.\d+|\[::1\]|0\.0\.0\.0)(:|/|$)", url))


class ModelRegistry:
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
        #: Keys (``provider/id``) of the models found on servers by ``discover_models``.
        self.local: set[str] = set()
        self.refresh()

    @classmethod
    async def from_plugins(cls, plugins: Any, ctx: Any = None, **kwargs: Any) -> "ModelRegistry":
        """A registry of every model the plugins register (``register_models``)."""
        models = await plugins.collect("register_models", key=lambda m: (m.provider, m.id), ctx=ctx)
        return cls([m for m in models if isinstance(m, Model)], **kwargs)

    async def discover(self, plugins: Any, settings: Any = None, ctx: Any = None) -> list[Model]:
        """Ask the plugins for models on servers they find (``discover_models``) and add
        them as built-in ones, so models.json's overrides apply; returns the new ones."""
        found = await plugins.collect("discover_models", key=lambda m: (m.provider, m.id),
                                      settings=settings, ctx=ctx)
        added = [m for m in found if isinstance(m, Model) and self.find(m.provider, m.id) is None]
        if added:
            self.builtin.extend(added)
            self.local.update(m.key for m in added)
            self.refresh()
        return added

    def __repr__(self) -> str:
        return f"<ModelRegistry {len(self.models)} models, {len(self.providers)} providers>"

    @property
    def models_json_path(self) -> Path:
        return self.agent_dir / "models.json"

    def refresh(self) -> None:
        """Re-read models.json and auth.json (pi re-reads them when /model opens)."""
        self.errors = []
        self.auth.reload()
        if self.auth.error:
            self.errors.append(self.auth.error)
        models, settings = list(self.builtin), {}
        if self.use_models_json:
            path = self.models_json_path
            try:
                config = load_models_json(path)
                if config is not None:
                    models, settings = models_from_config(config, self.builtin, self.env)
            except ValueError as exc:
                self.errors.append(f"models.json ({path}): {exc}; only the built-in models are available")
                models, settings = list(self.builtin), {}
        self.models = models
        self._settings = settings

    # ------------------------------------------------------------ lookup

    @property
    def providers(self) -> list[str]:
        return list(dict.fromkeys(m.provider for m in self.models))

    def find(self, provider: str, model_id: str) -> Model | None:
        for model in self.models:
            if model.provider == provider and model.id == model_id:
                return model
        return None

    def available(self) -> list[Model]:
        """Models that can be used now: a key is configured, or none is needed (a
        provider of models.json's own, or a server on this machine)."""
        return [m for m in self.models if self.has_auth(m)]

    # ------------------------------------------------------------ keys

    def set_runtime_key(self, provider: str, key: str) -> None:
        """A key for this run only (``--api-key``), above every other source."""
        self._runtime_keys[provider] = key

    def env_var(self, model: Model) -> str:
        return model.api_key_env or re.sub(r"[^A-Z0-9]", "_", model.provider.upper()) + "_API_KEY"

    def key_source(self, model: Model) -> str | None:
        """Where the key for ``model`` would come from (never the key itself)."""
        if model.provider in self._runtime_keys:
            return "--api-key"
        if self.auth.has(model.provider):
            return "auth.json"
        if self.env.get(self.env_var(model)):
            return f"environment ({self.env_var(model)})"
        if (self._settings.get(model.provider) or ProviderConfig()).api_key:
            return "models.json"
        return None

    def has_auth(self, model: Model) -> bool:
        """A key is configured, or none is needed: a provider of models.json's own, a
        server on this machine, or a model without a base URL (an in-process provider a
        plugin registered, such as the docs' EchoProvider: there is nothing to log in to)."""
        settings = self._settings.get(model.provider)
        return (self.key_source(model) is not None or (settings is not None and settings.custom)
                or not model.base_url or _is_local(model.base_url) or model.key in self.local)

    def api_key(self, model: Model) -> str | None:
        """The key for a request to ``model`` (``None``: send none, fine for local servers)."""
        key = self._runtime_keys.get(model.provider)
        if key:
            return key
        key = self.auth.api_key(model.provider, self.env)
        if key:
            return key
        key = self.env.get(self.env_var(model))
        if key:
            return key
        configured = (self._settings.get(model.provider) or ProviderConfig()).api_key
        return resolve_config_value(configured, self.env) if configured else None

    def request_headers(self, model: Model) -> dict[str, str]:
        """Extra headers for a request: models.json's ``authHeader`` adds a bearer token."""
        settings = self._settings.get(model.provider)
        if settings is not None and settings.auth_header:
            key = self.api_key(model)
            if key:
                return {"Authorization": f"Bearer {key}"}
        return {}

    # ------------------------------------------------------------ patterns

    def resolve(self, pattern: str, provider: str | None = None) -> Resolution:
        """The model a CLI ``--model`` (and ``--provider``) means: ``provider/id``, a
        bare id, or part of an id or name (an alias is preferred to a dated version),
        each optionally followed by ``:<thinking level>``. An unknown id of a known
        provider becomes a custom model of that provider (with a warning). Raises
        :class:`ModelNotFoundError`."""
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
            if exact is not None:
                return Resolution(exact)
        if provider and chosen and pattern.lower().startswith(chosen.lower() + "/"):
            text = pattern[len(chosen) + 1:]
        candidates = [m for m in models if m.provider == chosen] if chosen else models
        found = _parse_pattern(text, candidates)
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
            return Resolution(
                attrs.evolve(base, id=text, name=text),
                warning=f'Model "{text}" not found for provider "{chosen}". Using custom model id.',
            )
        shown = f"{chosen}/{text}" if chosen else pattern
        raise ModelNotFoundError(f'Model "{shown}" not found. Use --list-models to see available models.')

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


def _exact_id_or_key(pattern: str, models: list[Model]) -> Model | None:
    lower = pattern.strip().lower()
    for model in models:
        if model.id.lower() == lower or model.key.lower() == lower:
            return model
    return None


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


def _tokens(count: int) -> str:
    for size, unit in ((1_000_000, "M"), (1_000, "K")):
        if count >= size:
            value = count / size
            return f"{value:g}{unit}" if value == int(value) else f"{value:.1f}{unit}"
    return str(count)


def model_table(models: Iterable[Model], local: set[str] = frozenset()) -> str:
    """The ``--list-models`` table: provider, model, context, max-out, thinking, images;
    models found on local servers (keys in ``local``) add a column that marks them."""
    models = list(models)
    marked = any(m.key in local for m in models)
    header = ("provider", "model", "context", "max-out", "thinking", "images") + (("source",) if marked else ())
    rows = [(m.provider, m.id, _tokens(m.context_window), _tokens(m.max_tokens),
             "yes" if m.reasoning else "no", "yes" if m.accepts_images else "no")
            + ((("local" if m.key in local else ""),) if marked else ()) for m in models]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()
                     for row in [header, *rows])
