"""Packages for one run (``pi -e npm:NAME``, ``-e git:HOST/OWNER/REPO@REF``, a git URL),
as pi 1.6 keeps them: never written to settings.json, cached under
``<agent dir>/tmp/extensions/`` (npm: one npm project ``npm/<hash>/``; git: one clone per
source and ref, ``git-<host>/<hash>/<owner>/<repo>``, the hash pi's), and checked on
every start and ``/reload``: a missing one is installed; an unpinned npm package is
reinstalled when the registry has a newer matching version; a git clone is fetched and
reset to its ref or branch, unless the ref is a commit hash already checked out. A check
that fails, or offline mode, keeps the cached copy. Their resources come before every
other (pi's ``cliEnabledSkills`` first), even with ``--no-skills``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pi_plugins.packages import sources
from pi_plugins.packages.configured import ConfiguredPackage

SCOPE = "temporary"
_COMMIT = re.compile(r"^[0-9a-f]{7,64}$", re.I)


def temp_root(agent_dir: Path) -> Path:
    return agent_dir / "tmp" / "extensions"


def _hashed(prefix: str, suffix: str = "", ref: str | None = None) -> str:
    """pi's ``getTemporaryDir`` hash: sha256 of ``prefix-suffix[@ref]``, 8 hex digits."""
    text = f"{prefix}-{suffix}{'@' + ref if ref else ''}"
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def npm_root(agent_dir: Path) -> Path:
    """The one npm project every temporary npm package is installed into."""
    return temp_root(agent_dir) / "npm" / _hashed("npm")


def git_path(source: sources.GitSource, agent_dir: Path) -> Path:
    prefix = f"git-{source.host}"
    return temp_root(agent_dir) / prefix / _hashed(prefix, source.path, source.ref) / source.path


def managed_path(source: sources.NpmSource | sources.GitSource, agent_dir: Path) -> Path:
    if isinstance(source, sources.NpmSource):
        return npm_root(agent_dir) / "node_modules" / source.name
    return git_path(source, agent_dir)


def packages(settings: Any, agent_dir: Path) -> tuple[list[ConfiguredPackage], list[str]]:
    """The run's ``-e`` package sources (``settings.extension_sources``), each with
    where it is cached (``path`` None: not yet); sources that cannot be read, as problems."""
    found, problems = [], []
    for text in getattr(settings, "extension_sources", None) or []:
        try:
            source = sources.parse_source(text)
        except sources.SourceError as exc:
            problems.append(f"-e {exc}")
            continue
        if isinstance(source, sources.LocalSource):  # a folder (made absolute): loaded where it is
            found.append(ConfiguredPackage(text, text, source, SCOPE, Path(source.path)))
            continue
        path = managed_path(source, agent_dir)
        found.append(ConfiguredPackage(text, text, source, SCOPE, path if path.exists() else None))
    return found, problems


def failure_line(text: str, message: str) -> str:
    """pi 1.6's start-up warning for a temporary package it could not install."""
    return f'Extension package "{text}": failed to install ({message}). Check the source and try again.'


def _install(source: sources.NpmSource | sources.GitSource, agent_dir: Path) -> None:
    from pi_plugins.packages.git_install import install_git
    from pi_plugins.packages.npm_install import install_npm

    if isinstance(source, sources.NpmSource):
        install_npm(source, npm_root(agent_dir))
    else:
        install_git(source, git_path(source, agent_dir), temp_root(agent_dir))


def _npm_is_stale(source: sources.NpmSource, path: Path, root: Path) -> bool:
    """The installed version differs from the configured one, or (unpinned) the
    registry has a newer version that matches."""
    from pi_plugins.packages import semver
    from pi_plugins.packages.npm_install import installed_version
    from pi_plugins.packages.npm_registry import NpmConfig, Registry

    version = installed_version(path)
    if not isinstance(version, str):
        return True
    if source.version and semver.valid_range(source.version) and not semver.satisfies(version, source.version):
        return True
    if source.pinned:
        return False
    newest = Registry(NpmConfig.load(root)).pick(source.name, source.version)
    newer, installed = semver.parse(newest), semver.parse(version)
    return newer is not None and installed is not None and newer > installed


def _refresh(package: ConfiguredPackage, agent_dir: Path, say: Callable[[str], None]) -> None:
    """Bring a cached package up to date; raises when the check fails (the cache stays)."""
    from pi_plugins.packages.git_install import head

    source, path = package.source, package.path
    assert path is not None and not isinstance(source, sources.LocalSource)
    if isinstance(source, sources.NpmSource):
        if _npm_is_stale(source, path, npm_root(agent_dir)):
            wanted = source if source.version else sources.NpmSource(source.spec, source.name, "latest")
            _install(wanted, agent_dir)
        return
    current = head(path)
    if source.ref and _COMMIT.match(source.ref) and current and current.lower().startswith(source.ref.lower()):
        return
    say(f"Refreshing {package.text}...")
    _install(source, agent_dir)


def prepare(settings: Any, agent_dir: Path, *, offline: bool,
            say: Callable[[str], None]) -> list[str]:
    """Install the missing ``-e`` packages and refresh the cached ones; the warnings."""
    from pi_plugins.packages.configured import FAILED
    from pi_plugins.packages.npm_registry import NpmError

    found, warnings = packages(settings, agent_dir)
    for package in found:
        if package.path is None:
            if offline:
                continue
            say(f"Installing {package.text}...")
            try:
                _install(package.source, agent_dir)  # type: ignore[arg-type]  # local ones were left out
                FAILED.discard(package.text)
            except (NpmError, OSError) as exc:
                FAILED.add(package.text)
                warnings.append(failure_line(package.text, str(exc)))
        elif not offline and not isinstance(package.source, sources.LocalSource):
            try:
                _refresh(package, agent_dir, say)
            except (NpmError, OSError):
                pass  # as pi: the cached copy loads
    return warnings
