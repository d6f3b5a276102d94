"""Project trust, as pi 1.6 has it: a folder's own code and configuration load only once
the user has trusted the folder.

Cloning a repository and running ``pi`` in it must not run the repository's
``.pi/extensions/*.py``. The resources a project could use to run code or steer the
agent are *protected* (:data:`PROTECTED`, plus ``.agents/skills`` in the folder or an
ancestor); context files (``AGENTS.md`` and the like) are not, and load regardless.

The decision, in pi's order (:func:`decide`):

1. ``-a/--approve`` or ``-na/--no-approve`` on the command line;
2. a folder without protected resources is trusted, unless a saved decision says no;
3. the ``project_trust`` hook of the plugins already loaded (built-ins, installed
   packages, ``<agent dir>/extensions`` and ``-e``; the project's own are not loaded yet):
   the first ``yes`` or ``no`` decides, ``remember`` saves it;
4. the closest saved decision for the folder or one of its parents (``trust.json``);
5. the agent dir's ``defaultProjectTrust``: ``"always"``, ``"never"`` or ``"ask"``
   (the default): the chat asks; the other modes cannot, and skip the resources.

Decisions are saved in ``<agent dir>/trust.json`` exactly as pi 1.6 writes it (canonical
folder paths to ``true``/``false``/``null``, sorted, behind pi's ``trust.json.lock``
directory lock), so one decision holds for both programs.

The shell asks for the decision through the ``decide_project_trust`` hook (this
package's ``__init__`` answers it) and fails closed without an answer. The decision
travels on the settings object (:attr:`Settings.project_trusted`): the settings leave the
project's file out, discovery leaves ``.pi/extensions`` out, and each resource loader
asks :func:`pi_core.app.settings.project_allowed` before reading a protected path.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_core.protocol.records import field, record

#: What a project's ``.pi`` folder may hold that needs trust (pi 1.6's list).
PROTECTED = ("settings.json", "mcp.json", "extensions", "skills", "prompts", "themes",
             "SYSTEM.md", "APPEND_SYSTEM.md")
TRUST_FILE = "trust.json"
DEFAULT_SETTING = "defaultProjectTrust"
CHOICES = ("ask", "always", "never")


def canonical(path: str | os.PathLike) -> str:
    """The folder as trust.json names it: absolute, symlinks resolved."""
    return os.path.realpath(os.path.abspath(os.path.expanduser(str(path))))


def protected_resources(cwd: str | os.PathLike) -> list[str]:
    """The protected resources found from ``cwd`` (paths as found; [] when none): the
    :data:`PROTECTED` entries of ``.pi``, and ``.agents/skills`` in ``cwd`` or an ancestor
    (the user's own ``~/.agents/skills`` excepted). A bare ``.pi`` folder needs no trust."""
    folder = Path(canonical(cwd))
    found = [str(folder / ".pi" / name) for name in PROTECTED if (folder / ".pi" / name).exists()]
    users = Path(canonical(Path(os.environ.get("HOME") or Path.home()) / ".agents" / "skills"))
    for parent in (folder, *folder.parents):
        skills = parent / ".agents" / "skills"
        if skills != users and skills.exists():
            found.append(str(skills))
    return found


# ---------------------------------------------------------------- trust.json


class TrustStoreError(Exception):
    """trust.json cannot be read or written; its decisions are not used."""


class TrustStore:
    """``<agent dir>/trust.json``: saved decisions by folder. Reads and writes take pi's
    lock (the directory ``trust.json.lock``, as npm's proper-lockfile makes it)."""

    STALE_SECONDS = 10.0

    def __init__(self, agent_dir: str | os.PathLike) -> None:
        self.path = Path(agent_dir) / TRUST_FILE

    def closest(self, cwd: str | os.PathLike) -> tuple[str, bool] | None:
        """``(folder, decision)`` saved for ``cwd`` or its closest parent, or ``None``."""
        if not self.path.exists():  # nothing saved: no lock taken, no folder made
            return None
        data = self._locked(self._read)
        current = canonical(cwd)
        while True:
            value = data.get(current)
            if value is True or value is False:
                return current, value
            parent = os.path.dirname(current)
            if parent == current:
                return None
            current = parent

    def get(self, cwd: str | os.PathLike) -> bool | None:
        found = self.closest(cwd)
        return None if found is None else found[1]

    def set_many(self, updates: list[tuple[str, bool | None]]) -> None:
        """Save decisions (``None`` removes the folder's own entry, as pi's "trust the
        parent folder" does for the folder itself)."""
        def change() -> None:
            data = self._read()
            for path, decision in updates:
                key = canonical(path)
                data.pop(key, None)
                if decision is not None:
                    data[key] = decision
            self._write(data)

        self._locked(change)

    def set(self, cwd: str | os.PathLike, decision: bool) -> None:
        self.set_many([(str(cwd), decision)])

    def _read(self) -> dict[str, bool | None]:
        try:
            text = self.path.read_text(encoding="utf-8-sig")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise TrustStoreError(f"cannot read {self.path}: {exc}") from exc
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise TrustStoreError(f"{self.path} is not valid JSON: {exc}") from exc
        if not isinstance(data, dict) or any(v not in (True, False, None) for v in data.values()):
            raise TrustStoreError(f"{self.path}: expected an object of folder paths to true, false or null")
        return data

    def _write(self, data: dict) -> None:
        text = json.dumps({k: data[k] for k in sorted(data)}, indent=2, ensure_ascii=False) + "\n"
        temp = self.path.with_name(f".{TRUST_FILE}.{os.getpid()}.tmp")
        try:
            temp.write_text(text, encoding="utf-8")
            os.replace(temp, self.path)
        except OSError as exc:
            raise TrustStoreError(f"cannot save {self.path}: {exc}") from exc

    def _locked(self, action: Callable[[], Any]) -> Any:
        lock = self.path.with_name(TRUST_FILE + ".lock")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TrustStoreError(f"cannot create {self.path.parent}: {exc}") from exc
        deadline = time.monotonic() + 2.0
        while True:
            try:
                os.mkdir(lock)
                break
            except FileExistsError:
                try:  # a lock its holder left behind (it died): proper-lockfile's rule
                    if time.time() - lock.stat().st_mtime > self.STALE_SECONDS:
                        os.rmdir(lock)
                        continue
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    raise TrustStoreError(f"{lock} is held by another pi") from None
                time.sleep(0.02)
            except OSError as exc:
                raise TrustStoreError(f"cannot lock {self.path}: {exc}") from exc
        try:
            return action()
        finally:
            try:
                os.rmdir(lock)
            except OSError:
                pass


# ---------------------------------------------------------------- the choices


# (pi's answers and its question: :mod:`.asking`, imported where the user is asked)


# ---------------------------------------------------------------- the decision


@record
class TrustDecision:
    """Whether the project is trusted, and why: ``flag`` (-a/-na), ``no-resources``,
    ``plugin``, ``saved``, ``default`` (defaultProjectTrust), ``asked``, or
    ``unasked`` (the setting says ask, but this mode cannot)."""

    trusted: bool
    source: str
    resources: list[str] = field(factory=list)
    problems: list[str] = field(factory=list)
    #: The line a mode prints about what it skipped (:func:`notice`), set by the plugin.
    notice: str | None = None

    @property
    def settled(self) -> bool:
        """No plugin's ``project_trust`` answer and no question could change it: the
        flags decided, or the folder has nothing to protect."""
        return self.source == "flag" or not self.resources

    @property
    def skipped(self) -> bool:
        """Protected resources were found and left out."""
        return not self.trusted and bool(self.resources)


def default_policy(global_settings: dict) -> tuple[str, str | None]:
    """``defaultProjectTrust`` from the agent dir's settings only (a project cannot set
    it), and a problem when its value is not one of :data:`CHOICES`."""
    value = global_settings.get(DEFAULT_SETTING, "ask") if isinstance(global_settings, dict) else "ask"
    if value in CHOICES:
        return value, None
    return "ask", f"settings {DEFAULT_SETTING} must be one of {', '.join(CHOICES)}; using \"ask\""


def quiet_decision(cwd: str | os.PathLike, agent_dir: str | os.PathLike,
                   global_settings: dict | None = None, *, override: bool | None = None) -> TrustDecision:
    """The decision where nothing can be asked and no plugin is loaded yet (``pi --help``,
    ``pi plugins``, ``pi batch``, the SDK): the flags, the saved decision, then the default."""
    resources = protected_resources(cwd)
    if override is not None:
        return TrustDecision(override, "flag", resources)
    return _without_asking(cwd, agent_dir, global_settings or {}, resources)


def _without_asking(cwd, agent_dir, global_settings, resources) -> TrustDecision:
    problems: list[str] = []
    store = TrustStore(agent_dir)
    try:
        saved = store.get(cwd)
    except TrustStoreError as exc:
        saved, problems = None, [f"{exc}; its decisions are not used"]
    if not resources:
        return TrustDecision(saved is not False, "no-resources" if saved is None else "saved", [], problems)
    if saved is not None:
        return TrustDecision(saved, "saved", resources, problems)
    policy, problem = default_policy(global_settings)
    problems += [problem] if problem else []
    if policy == "ask":
        return TrustDecision(False, "unasked", resources, problems)
    return TrustDecision(policy == "always", "default", resources, problems)


async def decide(cwd: str | os.PathLike, agent_dir: str | os.PathLike, *,
                 override: bool | None = None, plugins: Any = None, ctx: Any = None,
                 global_settings: dict | None = None, ui: Any = None) -> TrustDecision:
    """The trust decision for ``cwd``, in pi's order (see the module docstring). ``ui``
    (with ``select``) is given only where the user can be asked, i.e. in the chat."""
    resources = protected_resources(cwd)
    if override is not None:
        return TrustDecision(override, "flag", resources)
    if not resources:
        return _without_asking(cwd, agent_dir, global_settings or {}, resources)
    problems: list[str] = []
    store = TrustStore(agent_dir)
    if plugins is not None and plugins.has("project_trust"):
        from pi_plugins.trust.asking import ProjectTrustEvent

        answers = await plugins.call("project_trust", event=ProjectTrustEvent(canonical(cwd)), ctx=ctx)
        for answer in answers:
            trusted, remember = _answer(answer)
            if trusted is None:
                continue
            if remember:
                try:
                    store.set(cwd, trusted)
                except TrustStoreError as exc:
                    problems.append(str(exc))
            return TrustDecision(trusted, "plugin", resources, problems)
    found = _without_asking(cwd, agent_dir, global_settings or {}, resources)
    found.problems[:0] = problems
    if found.source != "unasked" or ui is None:
        return found
    from pi_plugins.trust.asking import question, trust_options

    labels = trust_options(cwd)
    chosen = await ui.select(question(cwd), [o.label for o in labels])
    option = next((o for o in labels if o.label == chosen), None)
    if option is None:  # no answer (Ctrl+C, end of input): not trusted, nothing saved
        return TrustDecision(False, "asked", resources, found.problems)
    if option.updates:
        try:
            store.set_many(list(option.updates))
        except TrustStoreError as exc:
            found.problems.append(str(exc))
    return TrustDecision(option.trusted, "asked", resources, found.problems)


def _answer(answer: Any) -> tuple[bool | None, bool]:
    """A handler's ``{"trusted": "yes"|"no"|"undecided", "remember": bool}`` (or an
    object with those attributes) as (trusted or None, remember)."""
    get = answer.get if isinstance(answer, dict) else lambda k, d=None: getattr(answer, k, d)
    value = get("trusted")
    if value is True or value == "yes":
        return True, bool(get("remember", False))
    if value is False or value == "no":
        return False, bool(get("remember", False))
    return None, False


def notice(decision: TrustDecision, cwd: str | os.PathLike, chat: bool = False) -> str | None:
    """The one line a mode that cannot ask prints when it skipped protected resources
    for want of a decision (pi 1.6 skips them silently); in the chat, pi's warning
    whenever they were skipped by a decision other than this run's answer."""
    if chat:
        if not decision.skipped or decision.source in ("asked", "flag"):
            return None
        return ("This project is not trusted. Project .pi resources and extensions are ignored. "
                "Use /trust to save a trust decision, then restart pi.")
    if decision.source != "unasked" or not decision.resources:
        return None
    base = canonical(cwd)
    names = ", ".join(os.path.relpath(r, base) if r.startswith(base) else r for r in decision.resources)
    return (f"Project resources not loaded ({names}): this folder is not trusted. Pass --approve "
            "to load them for this run, or save a decision with /trust in the chat.")
