"""``pi install`` / ``remove`` / ``update`` / ``list`` for pi packages (``npm:`` and
``git:`` sources, and what pi wrote in settings.json ``packages``), beside the PyPI
plugin packages of :mod:`pi_plugins.packages.manage`; the messages are pi 1.6's.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pi_core.paths import agent_dir as default_agent_dir
from pi_plugins.packages import sources
from pi_plugins.packages.configured import ConfiguredPackage, configured, load
from pi_plugins.packages.git_install import install_git, remove_git, update_git
from pi_plugins.packages.npm_install import (
    add_to_settings,
    install_npm,
    installed_version,
    remove_from_settings,
    settings_entry_text,
    uninstall_npm,
)
from pi_plugins.packages.npm_registry import NpmConfig, NpmError, Registry

UNTRUSTED = "Project is not trusted. Use --approve to modify local package config."


_ARCHIVES = (".whl", ".zip", ".tar.gz", ".tgz", ".tar.bz2")


def is_pi_source(source: str) -> bool:
    """What goes to pi's package manager here: ``npm:`` and ``git:`` sources, and the
    git URLs pi takes (``https://``, ``ssh://``, ``git://``); an ``https://`` URL of an
    archive (a wheel, a ``.zip``) stays pip's."""
    if source.startswith(("npm:", "git:")):
        return True
    if source.startswith(("http://", "https://")) and source.lower().endswith(_ARCHIVES):
        return False
    return source.startswith(("http://", "https://", "ssh://", "git://")) and sources.parse_git(source) is not None


#: What makes a folder a pi package when it has no ``package.json``: pi's conventional
#: resource folders.
_RESOURCE_FOLDERS = ("extensions", "skills", "prompts", "themes")


def is_pi_package_folder(source: str, cwd: str) -> bool:
    """A local folder that is a pi package (a ``package.json``, or pi's resource folders)
    and not a Python project or plugin folder, which stay pip's and ``extensions``'."""
    folder = sources.resolve_local(source, Path(cwd))
    if not folder.is_dir() or (folder / "__init__.py").is_file():
        return False
    if (folder / "package.json").is_file():
        return True
    return not _looks_like_python_project(folder) and any((folder / n).is_dir() for n in _RESOURCE_FOLDERS)


def _say(text: str = "", err: bool = False) -> None:
    print(text, file=sys.stderr if err else sys.stdout, flush=True)


def _trusted(cwd: Path, agent: Path, approve: bool | None) -> bool:
    from pi_core.app.settings import _read, quiet_trust

    return quiet_trust(cwd, agent, _read(agent / "settings.json", []), approve=approve).trusted is True


def _scope_paths(local: bool, cwd: Path, agent: Path) -> tuple[str, Path]:
    scope = "project" if local else "user"
    return scope, (cwd / ".pi" / "settings.json") if local else (agent / "settings.json")


def _looks_like_python_project(folder: Path) -> bool:
    has_python = (folder / "pyproject.toml").is_file() or (folder / "setup.py").is_file()
    return has_python and not (folder / "package.json").is_file()


def _begin(source_text: str, local: bool, cwd: str, approve: bool | None) -> tuple | int:
    """(here, agent dir, scope, settings path, source) for install and remove, or their
    exit code when the project is not trusted or the source does not parse."""
    here, agent = Path(cwd).absolute(), default_agent_dir()
    scope, settings_path = _scope_paths(local, here, agent)
    if local and not _trusted(here, agent, approve):
        _say(UNTRUSTED, err=True)
        return 1
    try:
        source = sources.parse_source(source_text)
    except sources.SourceError as exc:
        _say(f"Error: {exc}", err=True)
        return 1
    return here, agent, scope, settings_path, source


_OPTIONS = {"-l": "local", "--local": "local", "-a": "approve", "--approve": "approve",
            "-na": "no-approve", "--no-approve": "no-approve"}


def install_with_options(source_text: str, after: list[str], *, local: bool, cwd: str,
                         approve: bool | None) -> int:
    """:func:`install` with the options pi also takes after the source (``-l``,
    ``--approve``); a pi package has no pip options, so any other is refused."""
    unknown = [arg for arg in after if arg not in _OPTIONS]
    if unknown:
        _say(f"error: unknown option for a pi package: {' '.join(unknown)}", err=True)
        return 2
    local = local or any(_OPTIONS[arg] == "local" for arg in after)
    for arg in after:
        approve = {"approve": True, "no-approve": False}.get(_OPTIONS[arg], approve)
    return install(source_text, local=local, cwd=cwd, approve=approve)


def install(source_text: str, *, local: bool, cwd: str, approve: bool | None = None) -> int:
    """``pi install npm:…|git:…|./folder [-l]``: fetched, kept and recorded as pi 1.6
    does (a local folder only recorded, relative to the settings file's folder)."""
    begun = _begin(source_text, local, cwd, approve)
    if isinstance(begun, int):
        return begun
    here, agent, scope, settings_path, source = begun
    if isinstance(source, sources.LocalSource) and not sources.resolve_local(source.path, here).exists():
        _say(f"Error: {source_text}: no such file or directory", err=True)
        return 1
    _say(f"Installing {source_text}...")
    try:
        if isinstance(source, sources.LocalSource):
            pass  # loaded from where it is, without copying (pi 1.6): only the settings entry
        elif isinstance(source, sources.NpmSource):
            root = sources.npm_root(scope, agent, here)
            version, count = install_npm(source, root, Registry(NpmConfig.load(root)))
            _say(f"added {count} package{'s' if count != 1 else ''} ({source.name}@{version})")
        else:
            target = sources.managed_path(source, scope, agent, here)
            install_git(source, target, sources.git_root(scope, agent, here))
            if _looks_like_python_project(target):
                remove_git(target, sources.git_root(scope, agent, here))
                _say(f"{source_text} is a Python project: installing it with pip as a plugin package")
                from pi_plugins.packages.manage import _git_shorthand, run_install

                url = _git_shorthand(source_text[4:]) if source_text.startswith("git:") else f"git+{source_text}"
                return run_install(url, [], cwd=cwd, local=local)
        text = settings_entry_text(source_text, scope, agent, here)
        add_to_settings(settings_path, text, scope, agent, here)
    except (NpmError, OSError) as exc:
        _say(f"Error: {exc}", err=True)
        return 1
    _say(f"Installed {source_text}")
    _note_extensions(scope, source, agent, here)
    return 0


def _note_extensions(scope: str, source: sources.Source, agent: Path, cwd: Path) -> None:
    from pi_plugins.packages.configured import extension_lines, resources_of

    path = sources.installed_path(source, scope, agent, cwd)
    if path is None:
        return
    package = ConfiguredPackage(getattr(source, "spec", ""), _label(source), source, scope, path)
    from pi_plugins.packages.configured import PackageResources

    found = PackageResources([package], resources_of([package], agent, cwd))
    for line in extension_lines(found):
        _say(f"note: {line}")


def _label(source: sources.Source) -> str:
    if isinstance(source, sources.NpmSource):
        return f"npm:{source.spec}"
    if isinstance(source, sources.GitSource):
        return f"git:{source.host}/{source.path}"
    return source.path


def remove(source_text: str, *, local: bool, cwd: str, approve: bool | None = None) -> int:
    """``pi remove npm:…|git:…``: off the disk and out of settings.json."""
    begun = _begin(source_text, local, cwd, approve)
    if isinstance(begun, int):
        return begun
    here, agent, scope, settings_path, source = begun
    if isinstance(source, sources.LocalSource):  # typed from here; settings hold it from their folder
        source = sources.parse_source(settings_entry_text(source_text, scope, agent, here))
    _say(f"Removing {source_text}...")
    try:
        if isinstance(source, sources.NpmSource):
            root = sources.npm_root(scope, agent, here)
            if (root / "package.json").exists():
                count = uninstall_npm(source.name, root)
                _say(f"removed {count} package{'s' if count != 1 else ''}" if count else "up to date")
        elif isinstance(source, sources.GitSource):
            target = sources.managed_path(source, scope, agent, here)
            if target.exists():
                remove_git(target, sources.git_root(scope, agent, here))
        changed = remove_from_settings(settings_path, source, scope, agent, here)
    except (NpmError, OSError) as exc:
        _say(f"Error: {exc}", err=True)
        return 1
    if not changed:
        _say(f"No matching package found for {source_text}", err=True)
        return 1
    _say(f"Removed {source_text}")
    return 0


def _settings(here: Path, agent: Path, approve: bool | None) -> tuple[dict, dict, bool]:
    from pi_core.app.settings import _read

    trusted = _trusted(here, agent, approve)
    project = _read(here / ".pi" / "settings.json", []) if trusted else {}
    return _read(agent / "settings.json", []), project, trusted


def configured_packages(cwd: str, approve: bool | None = None) -> list[ConfiguredPackage]:
    here, agent = Path(cwd).absolute(), default_agent_dir()
    global_data, project_data, trusted = _settings(here, agent, approve)
    return configured(global_data, project_data, agent, here, project_trusted=trusted)[0]


def find_configured(target: str, cwd: str, approve: bool | None = None) -> list[ConfiguredPackage]:
    """The configured packages ``target`` names (by identity)."""
    here, agent = Path(cwd).absolute(), default_agent_dir()
    try:
        parsed = sources.parse_source(target)
    except sources.SourceError:
        return []
    found = []
    for package in configured_packages(cwd, approve):
        # a path typed on the command line starts from here; one in settings from its file
        wanted = (f"local:{sources.resolve_local(parsed.path, here)}" if isinstance(parsed, sources.LocalSource)
                  else sources.identity(parsed, package.scope, agent, here))
        if wanted == sources.identity(package.source, package.scope, agent, here):
            found.append(package)
    return found


def update(packages: list[ConfiguredPackage], cwd: str, target: str | None = None) -> int:
    """Bring each package to the newest version its source allows (an exact npm
    version is pinned, git goes to its ref); pi 1.6's report."""
    here, agent = Path(cwd).absolute(), default_agent_dir()
    changed: list[str] = []
    code = 0
    for package in packages:
        source = package.source
        suffix = " (project)" if package.scope == "project" else ""
        try:
            if isinstance(source, sources.NpmSource):
                if source.pinned:
                    continue
                root = sources.npm_root(package.scope, agent, here)
                registry = Registry(NpmConfig.load(root))
                before = installed_version(package.path) if package.path is not None else None
                latest = registry.pick(source.name, source.version)
                if before == latest:
                    continue
                _say(f"Updating {package.text}...")
                version, _ = install_npm(source, root, registry)
                if version != before:
                    changed.append(f"  {package.text}{suffix} {before or '(none)'} -> {version}")
            elif isinstance(source, sources.GitSource):
                clone = sources.managed_path(source, package.scope, agent, here)
                _say(f"Updating {package.text}...")
                old, new = update_git(source, clone, sources.git_root(package.scope, agent, here))
                if old != new:
                    changed.append(f"  {package.text}{suffix} {(old or '(none)')[:7]} -> {(new or '(none)')[:7]}")
        except (NpmError, OSError) as exc:
            _say(f"Error: {package.text}: {exc}", err=True)
            code = 1
    if changed:
        _say(f"Updated {len(changed)} package{'s' if len(changed) != 1 else ''}:")
        for line in changed:
            _say(line)
    elif code == 0:
        _say(f"{target} is already up to date" if target else "Packages are already up to date")
    return code


def list_lines(cwd: str, approve: bool | None = None) -> list[str]:
    """``pi list``'s lines for pi packages, as pi 1.6 prints them, then one line for
    each TypeScript extension they carry (empty without packages)."""
    here, agent = Path(cwd).absolute(), default_agent_dir()
    packages = configured_packages(cwd, approve)
    lines: list[str] = []
    for scope, title in (("user", "User packages:"), ("project", "Project packages:")):
        group = [p for p in packages if p.scope == scope]
        if not group:
            continue
        if lines:
            lines.append("")
        lines.append(title)
        for package in group:
            lines.append(f"  {package.text}{' (filtered)' if package.filtered else ''}")
            if package.path is not None:
                lines.append(f"    {package.path}")
    if packages:
        from pi_core.app.settings import Settings
        from pi_plugins.packages.configured import extension_lines

        global_data, project_data, trusted = _settings(here, agent, approve)
        settings = Settings(global_data, project_data, global_dir=agent, project_dir=here / ".pi",
                            project_trusted=trusted)
        extensions = extension_lines(load(settings, agent, here, trusted))
        if extensions:
            lines += ["", "Package extensions that cannot run here (TypeScript for pi on Node):"]
            lines += [f"  {line.split(': ')[0]}" for line in extensions]
    return lines
