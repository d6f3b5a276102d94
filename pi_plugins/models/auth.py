"""Keys: ``<agent dir>/auth.json`` (pi's format, written 0600), and config values that
may be ``!command``, an environment variable's name or the key itself. Keys never appear
in reprs, errors or logs.

auth.json also holds subscription sign-ins (``"type": "oauth"``), whose flows a plugin
gives (``register_sign_ins``). An expired one is refreshed before the request under the
lock pi takes (proper-lockfile's directory ``auth.json.lock``, stale after 30 s, touched
while held), so two processes, ours or pi's, refresh once.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pi_core.app.preflight import MissingAuthError
from pi_plugins.lock_dirs import try_lock, unlock, write_lock

_command_cache: dict[str, str | None] = {}


def no_models_available() -> str:
    """pi's words when no model can be used (``pi --list-models``, the chat's start),
    naming this project's docs (their folder when this is a source checkout)."""
    docs = Path(__file__).resolve().parents[2] / "docs"
    where = docs if (docs / "providers.md").is_file() else Path("docs")
    return ("No models available. Use /login to log into a provider via OAuth or API key. See:\n"
            f"  {where / 'providers.md'}\n  {where / 'configuration.md'}")


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


class SignInExpiredError(MissingAuthError):
    """A sign-in's token could not be refreshed: the message names the provider and says
    to sign in again (the prompt stops before its request, as with no key)."""


#: proper-lockfile's defaults as pi uses them: stale after 30 s (async refresh) or 10 s
#: (a plain write); the holder touches the lock every half of that.
LOCK_STALE_S = 30.0
WRITE_LOCK_STALE_S = 10.0


def _lock_path(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


class _AsyncLock:
    """For a refresh: proper-lockfile's retries as pi configures them (10, from 100 ms
    doubling to at most 10 s, randomised), the lock's time refreshed every 15 s."""

    def __init__(self, path: Path):
        self.lock = _lock_path(path)
        self._touch: asyncio.Task | None = None

    async def __aenter__(self):
        import random

        delay = 0.1
        for attempt in range(11):
            if try_lock(self.lock, LOCK_STALE_S):
                self._touch = asyncio.ensure_future(self._keep_fresh())
                return self
            if attempt == 10:
                break
            await asyncio.sleep(min(delay * (1 + random.random()), 10.0))
            delay = min(delay * 2, 10.0)
        raise TimeoutError(f"{self.lock} is held by another pi process; try again")

    async def _keep_fresh(self) -> None:
        while True:
            await asyncio.sleep(LOCK_STALE_S / 2)
            try:
                os.utime(self.lock)
            except OSError:
                return

    async def __aexit__(self, *exc) -> None:
        if self._touch is not None:
            self._touch.cancel()
        unlock(self.lock)


class AuthStorage:
    """``<agent dir>/auth.json``: ``{"<provider>": {"type": "api_key", "key": "..."}}``,
    written atomically, 0600 in a 0700 folder. ``sign_ins``: the flows by provider, or an
    async function giving them when first needed (so a start that refreshes nothing asks
    no plugin)."""

    def __init__(self, path: str | os.PathLike, sign_ins: Any = None):
        self.path = Path(path)
        self.sign_ins = sign_ins
        self.error: str | None = None
        self._data: dict[str, Any] = {}
        self._loaded: tuple | None = None
        self.reload()

    def __repr__(self) -> str:
        return f"<AuthStorage {self.path} providers={sorted(self._data)}>"

    def _stamp(self) -> tuple | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size, st.st_ino

    def _fresh(self) -> None:
        """Re-read the file when it changed since it was read (a /login or a refresh by
        this or another process, pi's too): one stat."""
        if self._stamp() != self._loaded:
            self.reload()

    def reload(self) -> None:
        self.error = None
        self._loaded = self._stamp()
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
        except json.JSONDecodeError as exc:  # say where, never what (the file holds secrets)
            self._data, self.error = {}, f"{self.path} is not valid JSON (line {exc.lineno}); it was ignored"
            return
        self._data = data if isinstance(data, dict) else {}

    @property
    def providers(self) -> list[str]:
        self._fresh()
        return list(self._data)

    def has(self, provider: str) -> bool:
        self._fresh()
        return isinstance(self._data.get(provider), dict)

    def api_key(self, provider: str, env: Mapping[str, str] | None = None) -> str | None:
        self._fresh()
        entry = self._data.get(provider)
        if not isinstance(entry, dict):
            return None
        if entry.get("type") == "oauth":  # a sign-in's token: usable until it expires
            access = entry.get("access")
            if isinstance(access, str) and not self.needs_refresh(provider):
                return access
            return None
        key = entry.get("key")
        return resolve_config_value(key, env) if isinstance(key, str) and key else None

    def env(self, provider: str) -> dict[str, str]:
        """A stored key's ``env`` (pi 1.6): its string values, for that provider only."""
        self._fresh()
        entry = self._data.get(provider)
        values = entry.get("env") if isinstance(entry, dict) and entry.get("type") != "oauth" else None
        if not isinstance(values, dict):
            return {}
        return {k: v for k, v in values.items() if isinstance(k, str) and isinstance(v, str)}

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

    def get(self, provider: str) -> dict | None:
        self._fresh()
        entry = self._data.get(provider)
        return dict(entry) if isinstance(entry, dict) else None

    def needs_refresh(self, provider: str) -> bool:
        """A sign-in whose token has expired (pi refreshes at ``expires``, which the
        sign-ins set a few minutes early)."""
        self._fresh()
        entry = self._data.get(provider)
        if not isinstance(entry, dict) or entry.get("type") != "oauth":
            return False
        expires = entry.get("expires")
        return not isinstance(expires, (int, float)) or time.time() * 1000 >= expires

    def set_api_key(self, provider: str, key: str) -> None:
        self.set(provider, {"type": "api_key", "key": key})

    def set_oauth(self, provider: str, credentials: dict) -> None:
        self.set(provider, {"type": "oauth", **credentials})

    def set(self, provider: str, entry: dict) -> None:
        """Store one provider's entry, the others as they are on disk now (under the lock)."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with write_lock(self.path, stale=WRITE_LOCK_STALE_S):
            self.reload()
            if self.error:
                raise ValueError(f"{self.error}: fix or remove it before storing a key")
            self._write({**self._data, provider: entry})

    def remove(self, provider: str) -> bool:
        """Forget a provider's key or sign-in; False when there was none."""
        if not self.path.exists():
            return False
        with write_lock(self.path, stale=WRITE_LOCK_STALE_S):
            self.reload()
            if provider not in self._data:
                return False
            data = dict(self._data)
            del data[provider]
            self._write(data)
            return True

    async def sign_in(self, provider: str) -> Any:
        """``provider``'s sign-in flow (see :attr:`sign_ins`), or ``None``."""
        flows = self.sign_ins
        if callable(flows):
            found = flows()
            flows = self.sign_ins = dict(await found if inspect.isawaitable(found) else found)
        return (flows or {}).get(provider)

    async def login(self, provider: str, callbacks, **options) -> None:
        """Run ``provider``'s sign-in (:meth:`sign_in`) and store it."""
        flow = await self.sign_in(provider)
        if flow is None:
            raise ValueError(f"{provider} has no sign-in; store an API key for it instead")
        self.set_oauth(provider, await flow.login(callbacks, **options))

    async def refreshed_key(self, provider: str) -> str | None:
        """The token of ``provider``'s sign-in, refreshed under the lock when expired (re-read
        first: another process may have done it). :class:`SignInExpiredError` when the
        provider refuses (the sign-in is kept for a later try)."""
        flow = await self.sign_in(provider)
        self.reload()
        if flow is None or not self.needs_refresh(provider):
            entry = self._data.get(provider)
            return entry.get("access") if isinstance(entry, dict) and not self.needs_refresh(provider) else None
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not self.path.exists():
            self._write({})
        detail = ""
        async with _AsyncLock(self.path):
            self.reload()
            entry = self._data.get(provider)
            if not isinstance(entry, dict) or entry.get("type") != "oauth":
                return None
            if not self.needs_refresh(provider):
                return flow.api_key(entry)
            try:
                fresh = await flow.refresh(entry)
            except Exception as exc:
                detail = str(exc) or type(exc).__name__
            else:
                self._write({**self._data, provider: {"type": "oauth", **fresh}})
                return flow.api_key(fresh)
        self.reload()  # another process may have refreshed it meanwhile
        if not self.needs_refresh(provider) and isinstance(self._data.get(provider), dict):
            return flow.api_key(self._data[provider])
        # pi's words, then why (pi keeps the reason to itself)
        raise SignInExpiredError(
            f'Authentication failed for "{provider}". Credentials may have expired or network is '
            f"unavailable. Run '/login {provider}' to re-authenticate (or `pi auth login {provider}`). "
            f"({flow.name}: {_without_secrets(detail, entry)})")

    def _write(self, data: dict) -> None:
        """Replace the file (atomically; 0600 in a 0700 folder). Callers hold the lock."""
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
        self._loaded = self._stamp()


def _without_secrets(text: str, entry: dict) -> str:
    for field in ("access", "refresh"):
        value = entry.get(field)
        if isinstance(value, str) and len(value) > 3:
            text = text.replace(value, "[redacted]")
    return text[:300]
