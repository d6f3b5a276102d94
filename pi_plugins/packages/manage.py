"""Plugin packages: ``pi install``, ``pi remove`` and ``pi list``.

pi (TypeScript) keeps npm and git packages in settings.json. A pi-harness plugin is a
Python package with ``pi.plugins`` entry points, so installing one is pip's job: pip runs
as ``sys.executable -m pip``, into the environment pi itself runs in, and that
environment's package metadata is the record (nothing is written to settings). What a
package added is the difference between the entry points before and after the install.

A plugin *file* (a ``.py`` file, or a folder with ``__init__.py`` and no project file) is
not a package: as pi does with local paths, its path goes into ``extensions`` in
settings.json without copying, the global file by default, the project's with ``-l``.
``-l`` means nothing for packages (every project shares the environment), and says so.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from attrs import define, field

from pi_core.app.discovery import GROUP, OWN_DISTRIBUTION, PluginPolicy
from pi_core.paths import agent_dir
from pi_plugins.packages.settings_entries import (
    PackageError,
    add_plugin_file,
    check_plugin_file,
    entry_path,
    remove_plugin_file,
    settings_file,
)

LOCAL_PACKAGE_MESSAGE = (
    "-l applies to plugin files only. Packages are installed with pip into the Python "
    "environment pi runs in, which every project shares: for project-only packages run pi "
    "from a project virtualenv; to turn a plugin off in one project, list it under "
    '"plugins.disabled" in .pi/settings.json.'
)


@define
class PluginPackage:
    """An installed distribution that provides ``pi.plugins`` entry points."""

    name: str
    version: str
    plugins: list[str] = field(factory=list)
    origin: str = "index"  # a path, a URL, or "index" (PyPI or another package index)
    editable: bool = False


def normalise(name: str) -> str:
    """A distribution name as pip compares it (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


# ---------------------------------------------------------------- what is installed


def _origin(dist: metadata.Distribution) -> tuple[str, bool]:
    """Where a distribution was installed from (PEP 610 ``direct_url.json``)."""
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "null")
    except (OSError, ValueError):
        direct = None
    if not isinstance(direct, dict) or "url" not in direct:
        return "index", False
    url = direct["url"]
    vcs = direct.get("vcs_info")
    if vcs:
        ref = vcs.get("requested_revision") or vcs.get("commit_id", "")[:12]
        return f"{vcs.get('vcs', 'git')}+{url}" + (f"@{ref}" if ref else ""), False
    if url.startswith("file://"):
        from urllib.parse import unquote, urlparse

        url = unquote(urlparse(url).path)
    return url, bool((direct.get("dir_info") or {}).get("editable"))


@define
class Installed:
    """A visible distribution, read at once (its files may be gone after a pip run)."""

    name: str
    version: str
    plugins: list[str]
    dist: metadata.Distribution = field(repr=False, eq=False)


def installed() -> dict[str, Installed]:
    """Every visible distribution by normalised name (the first on ``sys.path`` wins, as
    for imports), with the names of its ``pi.plugins`` entry points."""
    importlib.invalidate_caches()
    found: dict[str, Installed] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if not name or normalise(name) in found:
            continue
        plugins = sorted(ep.name for ep in dist.entry_points if ep.group == GROUP)
        found[normalise(name)] = Installed(name, dist.version, plugins, dist)
    return found


def plugin_packages() -> list[PluginPackage]:
    """The installed packages that provide pi plugins (pi-harness's built-ins aside),
    by name."""
    packages = []
    for key, found in sorted(installed().items()):
        if not found.plugins or key == OWN_DISTRIBUTION:
            continue
        origin, editable = _origin(found.dist)
        packages.append(PluginPackage(found.name, found.version, found.plugins, origin, editable))
    return packages


# ---------------------------------------------------------------- sources


@define
class Source:
    """What ``pi install SOURCE`` names: a pip requirement, or a plugin file."""

    kind: str  # "pip" or "file"
    value: str  # the requirement pip gets, or the file's absolute path


def _looks_like_path(source: str) -> bool:
    return source.startswith((".", "/", "~"))


def _is_project(path: Path) -> bool:
    return (path / "pyproject.toml").is_file() or (path / "setup.py").is_file()


def classify(source: str, cwd: str | Path) -> Source:
    """Read SOURCE as pi would: a path (project, wheel, file), ``git:`` shorthand, or a
    requirement for pip (a name, ``git+URL``, an archive URL)."""
    if source.startswith("git:"):
        return Source("pip", _git_shorthand(source[4:]))
    candidate = Path(os.path.expanduser(source))
    candidate = candidate if candidate.is_absolute() else Path(cwd) / candidate
    if not (_looks_like_path(source) or candidate.exists()):
        return Source("pip", source)
    if not candidate.exists():
        raise PackageError(f"{source}: no such file or directory ({candidate})", 2)
    candidate = candidate.resolve()
    if candidate.is_dir():
        if _is_project(candidate):
            return Source("pip", str(candidate))
        if (candidate / "__init__.py").is_file():
            return Source("file", str(candidate))
        raise PackageError(
            f"{source}: not a plugin: a folder needs a pyproject.toml (a package) or an "
            "__init__.py (a plugin folder)", 2)
    if candidate.suffix == ".py":
        return Source("file", str(candidate))
    if candidate.name.endswith((".whl", ".tar.gz", ".zip")):
        return Source("pip", str(candidate))
    raise PackageError(f"{source}: not a plugin: expected a .py file, a project folder or a wheel", 2)


def _git_shorthand(rest: str) -> str:
    """pi's ``git:host/user/repo[@ref]`` and ``git:git@host:user/repo[@ref]`` as pip URLs."""
    if rest.startswith("git@"):
        host, _, path = rest[4:].partition(":")
        return f"git+ssh://git@{host}/{path}"
    if re.match(r"^[a-z]+://", rest):
        return f"git+{rest}"
    return f"git+https://{rest}"


def _project_name(path: Path) -> str | None:
    """The distribution name a project folder declares in its pyproject.toml."""
    import tomllib

    try:
        data = tomllib.loads((path / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    name = data.get("project", {}).get("name")
    return name if isinstance(name, str) else None


# ---------------------------------------------------------------- pip


def pip(*args: str) -> subprocess.CompletedProcess:
    """Run pip of this interpreter (the environment pi runs in), output captured."""
    return subprocess.run([sys.executable, "-m", "pip", *args, "--disable-pip-version-check"],
                          capture_output=True, text=True)


def _pip_failed(what: str, proc: subprocess.CompletedProcess) -> PackageError:
    output = (proc.stdout + proc.stderr).strip()
    return PackageError(f"pip could not {what} (exit {proc.returncode}):\n{output}")


@define
class Change:
    """One distribution an install added or changed, with its plugins."""

    name: str
    version: str
    plugins: list[str]
    previous_version: str | None = None
    previous_plugins: list[str] = field(factory=list)


def changes(before: dict, after: dict) -> list[Change]:
    """Distributions that are new or changed (version or plugins) from ``before`` to
    ``after`` (both from :func:`installed`)."""
    found = []
    for key, now in sorted(after.items()):
        old = before.get(key)
        if old is not None and (old.version, old.plugins) == (now.version, now.plugins):
            continue
        found.append(Change(now.name, now.version, now.plugins,
                            old.version if old else None, old.plugins if old else []))
    return found


def install_package(requirement: str, pip_args: list[str], editable: bool = False) -> list[Change]:
    """``pip install`` the requirement; returns what changed in the environment."""
    before = installed()
    proc = pip("install", *pip_args, *(["-e"] if editable else []), requirement)
    if proc.returncode != 0:
        raise _pip_failed(f"install {requirement}", proc)
    return changes(before, installed())


def remove_package(package: PluginPackage, pip_args: list[str]) -> None:
    """``pip uninstall`` a plugin package (see :func:`find_package`)."""
    proc = pip("uninstall", "-y", *pip_args, package.name)
    if proc.returncode != 0:
        raise _pip_failed(f"remove {package.name}", proc)
    left = installed().get(normalise(package.name))
    if left is not None:
        where = getattr(left.dist, "_path", "another environment")
        raise PackageError(
            f"{package.name} is still installed ({where}): it lives outside the environment "
            f"pi runs in ({sys.prefix}), so pip left it alone")


def find_package(name: str) -> PluginPackage:
    """The plugin package called ``name``, or the one providing the plugin ``name``."""
    packages = plugin_packages()
    for package in packages:
        if normalise(package.name) == normalise(name):
            return package
    providers = [p for p in packages if name in p.plugins]
    if len(providers) == 1:
        return providers[0]
    if len(providers) > 1:
        names = ", ".join(p.name for p in providers)
        raise PackageError(f"{name}: several packages provide a plugin of that name ({names}); "
                           "give the package name", 2)
    if normalise(name) == OWN_DISTRIBUTION:
        raise PackageError("pi-harness is pi itself; uninstall it with pip if you mean to", 2)
    if normalise(name) in installed():
        raise PackageError(f"{name} is installed but provides no pi plugins; pi remove only "
                           "removes plugin packages (use pip uninstall)", 2)
    raise PackageError(f"No installed plugin package matches {name} (see pi list)")


# ---------------------------------------------------------------- plugin files in settings


def _say(text: str = "", err: bool = False) -> None:
    print(text, file=sys.stderr if err else sys.stdout, flush=True)


def _policy_notes(names: list[str], distribution: str, cwd: str | Path) -> None:
    from pi_core.app.settings import Settings

    policy = PluginPolicy.from_settings(Settings.load(cwd, agent_dir()))
    for name in names:
        reason = policy.reason(name, distribution, builtin=False)
        if reason is not None:
            _say(f"note: plugin {name} will not load: {reason}")


def run_install(source: str, pip_args: list[str], *, local: bool = False, cwd: str = ".",
                editable: bool = False, approve: bool | None = None) -> int:
    """``pi install``: the exit code; reports what was added. ``npm:`` and ``git:``
    sources are pi packages (:mod:`pi_plugins.packages.pi_commands`)."""
    from pi_plugins.packages import pi_commands

    if (pi_commands.is_pi_source(source) or pi_commands.is_pi_package_folder(source, cwd)) and not editable:
        return pi_commands.install_with_options(source, pip_args, local=local, cwd=cwd, approve=approve)
    try:
        if source.startswith("-"):
            raise PackageError(f"give SOURCE first; options after it go to pip "
                               f"(pi install ./my-plugin {source})", 2)
        found = classify(source, cwd)
        if found.kind == "file":
            name = check_plugin_file(Path(found.value))
            target, changed = add_plugin_file(Path(found.value), local, cwd)
            verb = "Added" if changed else "Already listed:"
            _say(f"{verb} plugin file {found.value} (plugin {name}) in {target}")
            _policy_notes([name], "", cwd)
            return 0
        if local:
            raise PackageError(LOCAL_PACKAGE_MESSAGE, 2)
        _say(f"Installing {source}...")
        added = install_package(found.value, pip_args, editable)
    except PackageError as exc:
        _say(f"error: {exc}", err=True)
        return exc.code
    with_plugins = [c for c in added if c.plugins or c.previous_plugins]
    for change in with_plugins:
        plugins = ", ".join(change.plugins) or "none"
        if change.previous_version is None:
            _say(f"Installed {change.name} {change.version}: plugins {plugins}")
        else:
            _say(f"Updated {change.name} {change.previous_version} -> {change.version}: plugins {plugins}")
            gone = sorted(set(change.previous_plugins) - set(change.plugins))
            if gone:
                _say(f"  no longer provides: {', '.join(gone)}")
        _policy_notes(change.plugins, change.name, cwd)
    if with_plugins:
        _say("The plugins load the next time pi starts.")
    elif added:
        names = ", ".join(f"{c.name} {c.version}" for c in added)
        _say(f"warning: installed {names}, but none of it provides pi plugins "
             f"(entry points in group {GROUP!r})", err=True)
    else:
        wanted = _requirement_name(found.value)
        current = next((p for p in plugin_packages()
                        if wanted and normalise(p.name) == normalise(wanted)), None)
        if current is not None:
            _say(f"{current.name} {current.version} is installed: plugins {', '.join(current.plugins)}")
        _say(f"Nothing new: {source} was already installed (pip options such as --upgrade "
             "go after SOURCE).")
    return 0


def _requirement_name(requirement: str) -> str | None:
    """The distribution a requirement or project path names, when it can be told."""
    if requirement.startswith("/"):
        path = Path(requirement)
        if path.name.endswith(".whl"):  # name-version-tags.whl
            return path.name.split("-")[0]
        return _project_name(path) if path.is_dir() else None
    match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[|[<>=!~;@ ]|$)", requirement)
    return match.group(1) if match and "://" not in requirement else None


def run_remove(source: str, pip_args: list[str], *, local: bool = False, cwd: str = ".",
               approve: bool | None = None) -> int:
    """``pi remove``: the exit code. pi packages (``npm:``, ``git:``, or any entry of
    settings.json ``packages``) go to :mod:`pi_plugins.packages.pi_commands`."""
    from pi_plugins.packages import pi_commands

    if pi_commands.is_pi_source(source) or pi_commands.find_configured(source, cwd, approve):
        return pi_commands.remove(source, local=local, cwd=cwd, approve=approve)
    try:
        name = source
        candidate = Path(os.path.expanduser(source))
        candidate = (candidate if candidate.is_absolute() else Path(cwd) / candidate).resolve()
        if _looks_like_path(source) or candidate.exists():
            if candidate.suffix == ".py" or (candidate / "__init__.py").is_file() and not _is_project(candidate):
                target = remove_plugin_file(candidate, local, cwd)
                if target is None:
                    where = settings_file(local, cwd)
                    other = "" if local else " (a project's entry needs -l)"
                    raise PackageError(f"{source} is not listed in {where}{other}")
                _say(f"Removed plugin file {candidate} from {target}")
                return 0
            project = _project_name(candidate) if candidate.is_dir() else None
            if project is None:
                raise PackageError(f"{source}: cannot tell which package this is; give its name "
                                   "(see pi list)", 2)
            name = project
        if local:
            raise PackageError(LOCAL_PACKAGE_MESSAGE, 2)
        package = find_package(name)
        _say(f"Removing {package.name}...")
        remove_package(package, pip_args)
    except PackageError as exc:
        _say(f"error: {exc}", err=True)
        return exc.code
    _say(f"Removed {package.name} {package.version}: plugins {', '.join(package.plugins)}")
    return 0


def plugin_files(cwd: str | Path, approve: bool | None = None) -> list[dict]:
    """The plugin files settings.json lists (global, then the project's: once the project
    is trusted, or with ``approve``, ``pi list -a``). The list's patterns (``!glob``,
    ``+path``, ``-path``) and built-in switches (``-builtin:NAME``) name no file: they are
    not listed (pi 1.6's ``pi list`` does not show them either), but a file they leave
    out says so (``left out``), and so does pi's TypeScript one (``cannot run here``)."""
    from pi_core.app.discovery import builtin_switch, foreign_extension
    from pi_core.app.resource_patterns import apply_patterns, is_pattern
    from pi_core.app.settings import Settings

    settings = Settings.load(cwd, agent_dir(), project_trusted=approve)
    found = []
    for scope, data, base in (("global", settings.global_data, settings.global_dir),
                              ("project", settings.project_data, settings.project_dir)):
        listed = data.get("extensions")
        entries = [e for e in listed if isinstance(e, str) and builtin_switch(e) is None] \
            if isinstance(listed, list) else []
        patterns = [e for e in entries if is_pattern(e)]
        named = [(e, p) for e, p in ((e, entry_path(e, base)) for e in entries if not is_pattern(e)) if p]
        paths = [p for _, p in named]
        kept = apply_patterns(paths, patterns, Path(base)) if patterns and base is not None else set(paths)
        found += [{"path": str(path), "scope": scope, "exists": path.exists(), "left_out": path not in kept,
                   "runs_here": foreign_extension(entry) is None} for entry, path in named]
    return found


def run_list(*, cwd: str = ".", as_json: bool = False, approve: bool | None = None) -> int:
    """``pi list``: installed plugin packages and plugin files from settings."""
    from pi_core.app.settings import Settings
    from pi_plugins.packages import pi_commands

    packages = plugin_packages()
    files = plugin_files(cwd, approve)
    policy = PluginPolicy.from_settings(Settings.load(cwd, agent_dir(), project_trusted=approve))
    pi_lines = [] if as_json else pi_commands.list_lines(cwd, approve)
    for line in pi_lines:
        _say(line)
    if pi_lines and (packages or files):
        _say()
    if as_json:
        rows = []
        for p in packages:
            rows.append({"name": p.name, "version": p.version, "plugins": p.plugins,
                         "origin": p.origin, "editable": p.editable,
                         "disabled": [n for n in p.plugins if policy.reason(n, p.name, False)]})
        _say(json.dumps({"environment": sys.prefix, "packages": rows, "files": files}, indent=2))
        return 0
    if not packages and not files:
        if not pi_lines:
            _say("No packages installed.")  # pi 1.6's words
        return 0
    if packages:
        _say(f"Plugin packages (in {sys.prefix}):")
    for p in packages:
        _say(f"  {p.name} {p.version}")
        names = [n + (" (disabled)" if policy.reason(n, p.name, False) else "") for n in p.plugins]
        _say(f"    plugins: {', '.join(names)}")
        if p.origin != "index":
            _say(f"    from: {p.origin}" + (" (editable)" if p.editable else ""))
    if files:
        _say('Plugin files (settings.json "extensions"):')
    for f in files:
        notes = [f["scope"]] + ([] if f["exists"] else ["missing"]) + (["left out"] if f["left_out"] else []) \
            + ([] if f["runs_here"] else ["for pi on Node: cannot run here"])
        _say(f"  {f['path']}  ({', '.join(notes)})")
    return 0


# ---------------------------------------------------------------- pi update


def _has_pi_packages(cwd: str, approve: bool | None) -> bool:
    from pi_plugins.packages import pi_commands

    return bool(pi_commands.configured_packages(cwd, approve))


def _update_requirement(name: str, origin: str, editable: bool) -> str | None:
    """What pip upgrades a package from: its name on the index (also for one installed
    from a wheel or archive file: a newer one is looked for), or the folder or VCS URL it
    came from; ``None`` for an editable install (its source is the user's checkout)."""
    if editable:
        return None
    if origin == "index" or origin.endswith((".whl", ".tar.gz", ".zip", ".tar.bz2")):
        return name
    return origin


def _report_update(name: str, before: dict, after: dict) -> None:
    old, new = before.get(normalise(name)), after.get(normalise(name))
    if new is None:
        _say(f"warning: {name} is no longer installed", err=True)
    elif old is None or old.version == new.version:
        _say(f"{new.name} {new.version} is up to date")
    else:
        plugins = f": plugins {', '.join(new.plugins)}" if new.plugins and name != OWN_DISTRIBUTION else ""
        _say(f"Updated {new.name} {old.version} -> {new.version}{plugins}")


def _update_pi_packages(target: str | None, everything: bool, extensions: bool, cwd: str,
                        approve: bool | None) -> tuple[bool, int]:
    """The pi packages' part of ``pi update``: (whether the target was one, exit code)."""
    from pi_plugins.packages import pi_commands

    offline = os.environ.get("PI_OFFLINE", "").lower() in ("1", "true", "yes")
    if target is not None and (pi_commands.is_pi_source(target) or pi_commands.find_configured(target, cwd, approve)):
        matches = pi_commands.find_configured(target, cwd, approve)
        if not matches:
            _say(f"Error: No matching package found for {target}", err=True)
            return True, 1
        if offline:
            _say("Skipped package updates (offline mode)")
            return True, 0
        return True, pi_commands.update(matches, cwd, target)
    if not (everything or extensions):
        return False, 0
    configured = pi_commands.configured_packages(cwd, approve)
    if not configured:
        return False, 0
    if offline:
        _say("Skipped package updates (offline mode)")
        return False, 0
    return False, pi_commands.update(configured, cwd)


def run_update(target: str | None, pip_args: list[str], *, self_update: bool = False,
               extensions: bool = False, everything: bool = False, force: bool = False,
               cwd: str = ".", approve: bool | None = None) -> int:
    """``pi update`` (pi 1.6's command): pi-harness itself by default (``self``, ``pi``
    and ``--self`` say the same), ``--extensions`` every installed plugin package, a
    SOURCE one of them, ``--all`` both; ``--force`` reinstalls. Everything goes through
    pip into the environment pi runs in; options after the target go to pip (a local
    index: ``--no-index --find-links DIR``)."""
    if target is not None and target.startswith("-"):
        pip_args, target = [target, *pip_args], None
    if target is not None and normalise(target) in ("self", "pi", OWN_DISTRIBUTION):
        target, self_update = None, True
    wants_self = everything or self_update or (target is None and not extensions)
    was_pi_package, code = _update_pi_packages(target, everything, extensions, cwd, approve)
    if was_pi_package:
        return code
    had_pi_packages = code != 0 or bool((everything or extensions) and _has_pi_packages(cwd, approve))
    try:
        packages = plugin_packages() if (everything or extensions) else \
            ([find_package(target)] if target is not None else [])
    except PackageError as exc:
        _say(f"error: {exc}", err=True)
        return exc.code
    requirements: list[tuple[str, str]] = []
    if wants_self:
        wants_self, code = _custom_self_update(pip_args, force, code)
    if wants_self:
        own = installed().get(OWN_DISTRIBUTION)
        if own is None:
            _say("error: pi-harness is not installed as a package here; nothing to update", err=True)
            code = 1
        else:
            origin, editable = _origin(own.dist)
            requirement = _update_requirement(own.name, origin, editable)
            if requirement is None:
                _say(f"pi-harness {own.version} is an editable install ({origin}): update that "
                     "checkout (git pull), pip does not replace it", err=True)
                code = 0 if packages else 1
            else:
                requirements.append((own.name, requirement))
    for package in packages:
        requirement = _update_requirement(package.name, package.origin, package.editable)
        if requirement is None:
            _say(f"{package.name} {package.version} is an editable install ({package.origin}): "
                 "its source is yours to update")
        else:
            requirements.append((package.name, requirement))
    if not requirements:
        if not packages and (everything or extensions) and not wants_self and not had_pi_packages:
            _say("No plugin packages installed.")
        return code
    _say(f"Updating {', '.join(name for name, _ in requirements)}...")
    before = installed()
    force_args = ["--force-reinstall", "--no-deps"] if force else []
    proc = pip("install", "--upgrade", *force_args, *pip_args, *(r for _, r in requirements))
    if proc.returncode != 0:
        _say(f"error: {_pip_failed('update ' + ', '.join(n for n, _ in requirements), proc)}", err=True)
        return 1
    after = installed()
    for name, _ in requirements:
        _report_update(name, before, after)
    if any(n != OWN_DISTRIBUTION for n, _ in requirements):
        _say("The plugins load the next time pi starts.")
    return code


def _custom_self_update(pip_args: list[str], force: bool, code: int) -> tuple[bool, int]:
    """(pip should still update pi-harness, the exit code): ``PI_SELF_UPDATE_COMMAND`` or
    ``selfUpdateCommand`` runs instead where set (:mod:`.self_update`)."""
    from pi_plugins.packages.self_update import SelfUpdateError, custom_command, run_custom

    try:
        command = custom_command(agent_dir())
    except SelfUpdateError as exc:
        _say(f"error: {exc}", err=True)
        return False, 1
    if command is None:
        return True, code
    own = installed().get(OWN_DISTRIBUTION)
    return False, run_custom(command, own.version if own else "0", pip, pip_args, force, _say) or code
