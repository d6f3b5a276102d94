"""Keys: ``<agent dir>/auth.json`` (pi's format, written 0600) and config values that
may be ``!command`` (its output), the name of an environment variable (its value) or the
key itself. Keys never appear in reprs, errors or logs. A prompt with no model or no key
stops before any request (:class:`MissingAuthError`)."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any, Mapping

from pi_core.protocol.model import is_unknown

_command_cache: dict[str, str | None] = {}


class MissingAuthError(RuntimeError):
    """No model, or no key for the model: the prompt stops before any request."""


def no_model_problem(model) -> str | None:
    """Why no prompt can start: there is no model at all (pi says so before any request)."""
    if is_unknown(model):
        return ("No model available: set a provider's API key (for example OPENAI_API_KEY), "
                "add a model to models.json, or pass --model. `pi --list-models` lists models.")
    return None


def resolve_config_value(value: str, env: Mapping[str, str] | None = None, *,
                         run: bool = True) -> str | None:
    """``!command`` → its trimmed output (run once per process; with ``run`` false only
    an output already known); the name of a set environment variable → its value;
    anything else → itself."""
    env = os.environ if env is None else env
    if value.startswith("!"):
        if value not in _command_cache and not run:
            return None
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

    def held(self, env: Mapping[str, str] | None = None) -> list[tuple[str, str, str | None]]:
        """(provider, key, the variable it came from or None) of every key stored here
        that is known without running a command (for redaction)."""
        env = os.environ if env is None else env
        found = []
        for provider, entry in self._data.items():
            if not isinstance(entry, dict):
                continue
            for field in ("key", "access", "refresh"):
                value = entry.get(field)
                if not isinstance(value, str) or not value:
                    continue
                if field == "key":
                    resolved = resolve_config_value(value, env, run=False)
                    if resolved:
                        found.append((provider, resolved, value if env.get(value) else None))
                else:
                    found.append((provider, value, None))
        return found

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
