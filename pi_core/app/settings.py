"""settings.json: global (``<agent dir>/settings.json``) and project (``.pi/settings.json``),
merged key by key with the project winning (nested objects merge too).

Keys are pi's (``defaultModel``, ``compaction.reserveTokens``…). Unknown keys are kept.
A file that is not valid JSON is reported in ``problems`` and ignored, never fatal.
Resource lists (``skills``, ``prompts``, ``extensions``) resolve relative to the folder
of the file that names them.

The project's file is read only for a trusted project (:mod:`pi_core.app.project_trust`);
untrusted, only its ``sessionDir`` is kept, as pi reads it before deciding.
:attr:`Settings.project_trusted` carries the decision to the resource loaders.
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
        self.data = self._merged()

    def _merged(self) -> dict:
        return _merge(_merge(_merge(DEFAULTS, self.global_data), self.project_data), self.run_data)

    @classmethod
    def load(cls, cwd: str | Path = ".", agent_dir: str | Path | None = None,
             project_trusted: bool | None = None) -> Settings:
        """Both files; ``project_trusted`` ``None``: decided without asking (the saved
        decision, else ``defaultProjectTrust``; :func:`project_trust.quiet_decision`)."""
        home = Path(agent_dir) if agent_dir is not None else default_agent_dir()
        project = project_dir(cwd)
        problems: list[str] = []
        global_data = _read(home / "settings.json", problems)
        if project_trusted is None:
            from pi_core.app.project_trust import quiet_decision

            project_trusted = quiet_decision(cwd, home, global_data).trusted
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
        """Keep a choice for the next run in the global settings.json, as pi keeps the
        last model and thinking level chosen as the defaults (in memory only when there
        is no file). The file is replaced whole, so a reader never sees half of it."""
        node = self.global_data
        *parents, last = key.split(".")
        for part in parents:
            node = node.setdefault(part, {}) if isinstance(node.get(part), dict) or part not in node else {}
        if node.get(last) == value:
            return
        node[last] = value
        self.data = self._merged()
        if self.global_dir is None:
            return
        import os

        path = Path(self.global_dir) / "settings.json"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temp = path.with_name(f".settings.json.{os.getpid()}.tmp")
            temp.write_text(json.dumps(self.global_data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            os.replace(temp, path)
        except OSError as exc:
            self.problems.append(f"{path}: cannot save {key}: {exc}")

    def set(self, key: str, value: Any) -> None:
        """Change a setting for this run only, never saved (RPC's ``set_auto_compaction``
        and ``set_auto_retry``, the chat's settings dialog)."""
        node = self.run_data
        *parents, last = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
        self.data = self._merged()

    def paths(self, key: str) -> list[Path]:
        """A resource list (``skills``, ``prompts``…): global entries, then project ones,
        each resolved against its own file's folder; ``~`` expands."""
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
