"""At start-up, the pi packages settings.json lists but the disk lacks are installed, as
pi 1.6 installs them (every mode, before the resources load): an npm package that is
missing or whose version is not the one configured, a git package never cloned; the
project's only once the project is trusted (the settings then carry its entries); none
offline (``PI_OFFLINE``, ``--offline``). Each install is announced on stderr; one that
fails does not stop the run: it becomes pi's warning, and that package's resources are
skipped (the next start, or ``/reload``, tries again). The run's ``-e`` packages are
installed or refreshed here too (:mod:`.temporary`).
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

from pi_plugins.packages import semver, sources
from pi_plugins.packages.configured import (
    FAILED,
    INSTALLING,
    ConfiguredPackage,
    configured,
    delta_base,
    effective,
)

#: One install at a time in this process: ``pi serve`` checks each folder's settings in a
#: thread of its own, and two folders may list the same package (the same npm root).
_ONE_AT_A_TIME = threading.Lock()


def offline(env: Any = None) -> bool:
    value = (env if env is not None else os.environ).get("PI_OFFLINE", "")
    return value.strip().lower() not in ("", "0", "false", "no")


def _version_matches(package: ConfiguredPackage) -> bool:
    """pi's check of an installed npm package: its ``package.json`` version satisfies
    the configured version or range (a dist-tag, or no version, takes what is there)."""
    from pi_plugins.packages.npm_install import installed_version

    source = package.source
    if not isinstance(source, sources.NpmSource) or not source.version or package.path is None:
        return True
    if not semver.valid_range(source.version):
        return True
    version = installed_version(package.path)
    return isinstance(version, str) and semver.satisfies(version, source.version)


def missing(packages: list[ConfiguredPackage], agent_dir: Path, cwd: Path) -> list[ConfiguredPackage]:
    """The effective npm and git packages that are not on disk as configured (a
    project ``autoload: false`` entry only changes its user entry: never installed)."""
    found = []
    for package in effective(packages, agent_dir, cwd):
        if isinstance(package.source, sources.LocalSource) or delta_base(package, packages, agent_dir, cwd):
            continue
        if package.path is None or not _version_matches(package):
            found.append(package)
    return found


def install_one(package: ConfiguredPackage, agent_dir: Path, cwd: Path) -> None:
    from pi_plugins.packages.git_install import install_git
    from pi_plugins.packages.npm_install import install_npm

    source, scope = package.source, package.scope
    if isinstance(source, sources.NpmSource):
        install_npm(source, sources.npm_root(scope, agent_dir, cwd))
    elif isinstance(source, sources.GitSource):
        install_git(source, sources.managed_path(source, scope, agent_dir, cwd),
                    sources.git_root(scope, agent_dir, cwd))


def failure_line(package: ConfiguredPackage, message: str) -> str:
    """pi 1.6's start-up warning for a package it could not install."""
    local = " --local" if package.scope == "project" else ""
    return (f'Extension package "{package.text}": failed to install ({message}). '
            f'Run "pi remove {package.text}{local}" to remove it from settings.json.')


def install_missing(settings: Any, *, env: Any = None, say: Any = None) -> list[str]:
    """Install what ``settings`` (pi_core's ``Settings``) lists and the disk lacks; the
    warnings for what could not be installed."""
    from pi_plugins.packages import temporary
    from pi_plugins.packages.npm_registry import NpmError

    if not hasattr(settings, "global_data") or settings.global_dir is None:
        return []
    if offline(env):  # the cached -e packages still load
        return []
    say = say or (lambda line: print(line, file=sys.stderr, flush=True))
    agent_dir = Path(settings.global_dir).absolute()
    cwd = Path(settings.project_dir).absolute().parent if settings.project_dir is not None else Path.cwd()
    trusted = getattr(settings, "project_trusted", False) is True
    packages, _ = configured(settings.global_data, settings.project_data, agent_dir, cwd, project_trusted=trusted)
    warnings = []
    with _ONE_AT_A_TIME:  # what is missing is looked at once the other install is over
        for package in missing(packages, agent_dir, cwd):
            say(f"Installing {package.text}...")
            INSTALLING.add(package.text)
            try:
                install_one(package, agent_dir, cwd)
                FAILED.discard(package.text)
            except (NpmError, OSError) as exc:
                FAILED.add(package.text)
                warnings.append(failure_line(package, str(exc)))
            finally:
                INSTALLING.discard(package.text)
        return warnings + temporary.prepare(settings, agent_dir, offline=False, say=say)
