"""settings.json: global (``<agent dir>/settings.json``) and project (``.pi/settings.json``),
merged key by key with the project winning (nested objects merge too).

Keys are pi's (``defaultModel``, ``compaction.reserveTokens``…). Unknown keys are kept.
A file that is not valid JSON is reported in ``problems`` and ignored, never fatal.
Resource lists (``skills``, ``prompts``, ``extensions``) resolve relative to the folder
of the file that names them.

The project's file is read only for a trusted project; untrusted, only its
``sessionDir`` is kept, as pi reads it before deciding. :attr:`Settings.project_trusted`
carries the decision to the resource loaders (:func:`project_allowed`).

Who decides is a plugin's business (the built-in ``trust``, :mod:`pi_plugins.trust`):
the shell asks the ``decide_project_trust`` hook (:func:`quiet_trust` before any plugin is
loaded, :func:`pi_plugins.trust.decide_trust` once they are) and fails closed: no answer,
or an answer from a plugin that raised, is "untrusted" (:func:`trust_answer`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pi_core.paths import agent_dir as default_agent_dir
from pi_core.paths import project_dir

DEFAULTS: dict[str, Any] = {
    "compaction": {"enabled": True, "reserveTokens": 16384, "keepRecentTokens": 20000},
    "branchSummary": {"reserveTokens": 16384},
    "retry": {"enabled": True, "maxRetries": 3, "baseDelayMs": 2000},
    "steeringMode": "one-at-a-time",
    "followUpMode": "one-at-a-time",
    "enableSkillCommands": True,
}


def _merge(base: dict, over: dict) -> dict:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


class Settings:
    def __init__(
        self,
        global_data: dict | None = None,
        project_data: dict | None = None,
        *,
        global_dir: Path | None = None,
        project_dir: Path | None = None,
        problems: list[str] | None = None,
        project_trusted: bool = True,
    ) -> None:
        self.global_data = global_data or {}
        self.project_data = project_data or {}
        self.global_dir = global_dir
        self.project_dir = project_dir
        self.problems = problems or []
        #: Whether the project's protected resources may load (see project_trust).
        self.project_trusted = project_trusted
        #: Settings changed for this run only (:meth:`set`), over both files.
        self.run_data: dict = {}
        #: What ``-e`` named for this run that is not a plugin path (pi's package sources:
        #: ``npm:``, ``git:``, URLs); the plugin that handles packages reads them.
        self.extension_sources: list[str] = []
        self.data = self._merged()

    def _merged(self) -> dict:
        return _merge(_merge(_merge(DEFAULTS, self.global_data), self.project_data), self.run_data)

    @classmethod
    def load(cls, cwd: str | Path = ".", agent_dir: str | Path | None = None,
             project_trusted: bool | None = None) -> Settings:
        """Both files; ``project_trusted`` ``None``: decided without asking
        (:func:`quiet_trust`: the saved decision, else ``defaultProjectTrust``)."""
        home = Path(agent_dir) if agent_dir is not None else default_agent_dir()
        project = project_dir(cwd)
        problems: list[str] = []
        global_data = _read(home / "settings.json", problems)
        if project_trusted is None:
            project_trusted = quiet_trust(cwd, home, global_data).trusted
        project_data = _read(project / "settings.json", problems if project_trusted else [])
        if not project_trusted:
            project_data = {k: project_data[k] for k in ("sessionDir",) if k in project_data}
        return cls(
            global_data,
            project_data,
            global_dir=home,
            project_dir=project,
            problems=problems,
            project_trusted=project_trusted,
        )

    def get(self, key: str, default: Any = None) -> Any:
        """A setting by dotted key (``"compaction.reserveTokens"``)."""
        value: Any = self.data
        for part in key.split("."):
            if not isinstance(value, dict) or part not in value:
                return default
            value = value[part]
        return value

    def remember(self, key: str, value: Any) -> None:
        """Keep a choice for the next run in the global settings.json (as pi keeps the
        last model chosen), replaced whole so a reader never sees half of it. The file is
        read again first, so what another process (or ``pi serve``'s page) saved since
        this one loaded stays; a file that cannot be read or parsed is never overwritten."""
        path = Path(self.global_dir) / "settings.json" if self.global_dir is not None else None
        if path is not None and path.exists():  # (none yet: this run's settings are all there is)
            unreadable: list[str] = []
            fresh = _read(path, unreadable)
            if unreadable:
                self.problems.append(f"cannot save {key}: {unreadable[0]}")
                path = None  # this run keeps the choice; the file stays as it is
            else:
                self.global_data = fresh
                self.data = self._merged()
        node = self.global_data
        *parents, last = key.split(".")
        for part in parents:
            node = node.setdefault(part, {}) if isinstance(node.get(part), dict) or part not in node else {}
        if node.get(last) == value:
            return
        node[last] = value
        self.data = self._merged()
        if path is None:
            return
        import os

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temp = path.with_name(f".settings.json.{os.getpid()}.tmp")
            temp.write_text(json.dumps(self.global_data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            os.replace(temp, path)
        except OSError as exc:
            self.problems.append(f"{path}: cannot save {key}: {exc}")

    def set(self, key: str, value: Any) -> None:
        """Change a setting for this run only, never saved (RPC's ``set_auto_retry``…)."""
        node = self.run_data
        *parents, last = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
        self.data = self._merged()

    def paths(self, key: str) -> list[Path]:
        """A resource list (``skills``…), global then project, each against its file's folder."""
        found = []
        for data, base in ((self.global_data, self.global_dir), (self.project_data, self.project_dir)):
            for entry in data.get(key, []) or []:
                if isinstance(entry, str):
                    path = Path(entry).expanduser()
                    found.append(path if path.is_absolute() or base is None else base / path)
        return found


def _read(path: Path, problems: list[str]) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        problems.append(f"{path}: cannot read: {exc}")
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(f"{path}: invalid JSON ({exc}); its settings are ignored")
        return {}
    if not isinstance(data, dict):
        problems.append(f"{path}: expected a JSON object; its settings are ignored")
        return {}
    return data


# ---------------------------------------------------------------- the trust gate


class TrustQuestion:
    """What ``decide_project_trust`` handlers receive (see the hook's spec)."""

    type = "decide_project_trust"

    def __init__(self, cwd: str | Path, agent_dir: str | Path, *, approve: bool | None = None,
                 global_settings: dict | None = None, quiet: bool = True, can_ask: bool = False,
                 chat: bool = False) -> None:
        self.cwd, self.agent_dir, self.approve = str(cwd), Path(agent_dir), approve
        self.global_settings = global_settings if isinstance(global_settings, dict) else {}
        self.quiet, self.can_ask, self.chat = quiet, can_ask, chat


class Untrusted:
    """The answer where no plugin gave one (or the one that did raised): fail closed."""

    trusted = False
    settled = False
    notice = None

    def __init__(self, problems: list[str] | None = None) -> None:
        self.problems = problems or []


#: The built-in plugin asked before any plugin is loaded (its ``pi.plugins`` entry point).
TRUST_PLUGIN = "trust"


def trust_answer(answer: Any) -> Any:
    """A ``decide_project_trust`` answer, or :class:`Untrusted` where there is none: no
    plugin answered, the answer has no boolean ``trusted``, or the handler raised (its
    :class:`pi_core.plugins.GuardFailure` blocks)."""
    if getattr(answer, "block", False) is True and hasattr(answer, "reason"):
        return Untrusted([answer.reason])
    if answer is None or not isinstance(getattr(answer, "trusted", None), bool):
        return Untrusted()
    return answer


def quiet_trust(cwd: str | Path, agent_dir: str | Path, global_settings: dict | None = None, *,
                approve: bool | None = None, chat: bool = False) -> Any:
    """The decision before any plugin is loaded and where nothing may be asked (``pi
    plugins``, ``pi list``, ``pi batch``, the SDK, ``Settings.load``): the answer of the
    built-in plugin named :data:`TRUST_PLUGIN` alone, unless the agent dir's settings
    disable it (``plugins.disabled``, ``-builtin:trust``); untrusted without it."""
    from pi_core.plugins import Plugins

    data = global_settings if isinstance(global_settings, dict) else {}
    disabled = (data.get("plugins") or {}).get("disabled") if isinstance(data.get("plugins"), dict) else None
    extensions = data.get("extensions")
    if (isinstance(disabled, list) and TRUST_PLUGIN in disabled) or \
            (isinstance(extensions, list) and f"-builtin:{TRUST_PLUGIN}" in extensions):
        return Untrusted()
    import importlib

    from pi_core.app.builtins import BUILTINS

    plugins = Plugins()
    try:
        plugins.register(importlib.import_module(BUILTINS[TRUST_PLUGIN]), TRUST_PLUGIN, source="builtin",
                         location=BUILTINS[TRUST_PLUGIN])
    except Exception as exc:  # not importable: no decision, so untrusted
        return Untrusted([f"the {TRUST_PLUGIN} plugin cannot load: {exc}"])
    if not plugins.has("decide_project_trust"):
        return Untrusted()
    question = TrustQuestion(cwd, agent_dir, approve=approve, global_settings=data, chat=chat)
    return trust_answer(_without_waiting(plugins.call("decide_project_trust", event=question, ctx=None)))


def _without_waiting(coroutine: Any) -> Any:
    """The result of a hook call whose handlers do not wait on anything (a quiet answer
    reads files only), without an event loop: ``Settings.load`` is synchronous and may
    run inside one. A handler that does wait gives no answer (untrusted)."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    return None


def project_allowed(settings: Any, cwd: str | Path | None = None,
                    agent_dir: str | Path | None = None) -> bool:
    """Whether a resource loader may read the project's protected resources: the
    decision the settings carry, else (settings made without one) :func:`quiet_trust`'s."""
    trusted = getattr(settings, "project_trusted", None)
    if isinstance(trusted, bool):
        return trusted
    if cwd is None:
        return False
    home = Path(agent_dir) if agent_dir is not None else default_agent_dir()
    data = getattr(settings, "global_data", None)
    return quiet_trust(cwd, home, data if isinstance(data, dict) else {}).trusted is True
