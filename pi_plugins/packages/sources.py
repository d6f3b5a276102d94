"""pi's package sources, as pi 1.6 reads them from ``settings.json`` ``packages`` and from
``pi install``: ``npm:NAME[@VERSION]``, git (``git:HOST/OWNER/REPO[@REF]``,
``git:git@HOST:OWNER/REPO``, or an ``https://``/``ssh://``/``git://`` URL), or a local
path; each with its identity (npm by name, git by host and path, local by resolved path)
and the folder pi keeps it in.

A bare name (``pi-themes``) is a local path to pi; ``pi install`` here keeps reading it
as a PyPI plugin package (:mod:`pi_plugins.packages.manage`), so only the ``npm:`` and
git forms reach this module from the command line.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from attrs import define

_NPM_SPEC = re.compile(r"^(@?[^@]+(?:/[^@]+)?)(?:@(.+))?$")
_SCP = re.compile(r"^git@([^:]+):(.+)$")
_URL_PREFIXES = ("https://", "http://", "ssh://", "git://")
_NOT_LOCAL = ("npm:", "git:", "github:", "http:", "https:", "ssh:", "builtin:")
_EXACT_VERSION = re.compile(r"^v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")


class SourceError(ValueError):
    """A source pi would not accept (an unsafe or incomplete git path, a bad npm name)."""


@define(frozen=True)
class NpmSource:
    spec: str  # what followed "npm:", as typed
    name: str
    version: str | None  # an exact version, a range or a dist-tag

    kind = "npm"

    @property
    def pinned(self) -> bool:
        """An exact version: ``pi update`` leaves it alone."""
        return self.version is not None and bool(_EXACT_VERSION.match(self.version))

    @property
    def identity(self) -> str:
        return f"npm:{self.name}"


@define(frozen=True)
class GitSource:
    repo: str  # what ``git clone`` gets (without the ref)
    host: str
    path: str  # owner/repo, without ``.git``
    ref: str | None

    kind = "git"

    @property
    def pinned(self) -> bool:
        return self.ref is not None

    @property
    def identity(self) -> str:
        return f"git:{self.host}/{self.path}"


@define(frozen=True)
class LocalSource:
    path: str  # as written; relative ones start from the settings file's folder

    kind = "local"


Source = NpmSource | GitSource | LocalSource


def is_local_path(source: str) -> bool:
    return not source.startswith(_NOT_LOCAL)


def parse_source(source: str) -> Source:
    """A source string as pi 1.6 reads it (local when it is nothing else)."""
    if source.startswith("npm:"):
        spec = source[4:].strip()
        match = _NPM_SPEC.match(spec)
        if not match:
            raise SourceError(f"{source}: not an npm package name")
        return NpmSource(spec, match.group(1), match.group(2))
    if is_local_path(source):
        return LocalSource(source)
    git = parse_git(source)
    return git if git is not None else LocalSource(source)


def _split_ref(url: str) -> tuple[str, str | None]:
    scp = _SCP.match(url)
    if scp:
        path, _, ref = scp.group(2).partition("@")
        return (f"git@{scp.group(1)}:{path}", ref) if path and ref else (url, None)
    if "://" in url:
        parts = urlsplit(url)
        path, _, ref = parts.path.lstrip("/").partition("@")
        if not path or not ref:
            return url, None
        return f"{parts.scheme}://{parts.netloc}/{path}", ref
    host, slash, rest = url.partition("/")
    path, _, ref = rest.partition("@")
    if not slash or not path or not ref:
        return url, None
    return f"{host}/{path}", ref


def _unsafe(value: str, allow_slash: bool) -> bool:
    for candidate in (value, unquote(value)):
        if "\0" in candidate or "\\" in candidate or candidate.startswith("/"):
            return True
        if (not allow_slash and "/" in candidate) or ".." in candidate.split("/"):
            return True
    return False


def parse_git(source: str) -> GitSource | None:
    """A git source, or ``None``: with ``git:`` every shorthand, without it only URLs."""
    prefixed = source.startswith("git:")
    url = source[4:].strip() if prefixed else source.strip()
    if not prefixed and not (url.startswith(_URL_PREFIXES) or _SCP.match(url)):
        return None
    repo, ref = _split_ref(url)
    scp = _SCP.match(repo)
    if scp:
        host, path = scp.group(1), scp.group(2)
    elif repo.startswith(_URL_PREFIXES):
        parts = urlsplit(repo)
        host, path = parts.hostname or "", parts.path.lstrip("/")
    else:
        host, _, path = repo.partition("/")
        if not path or ("." not in host and host != "localhost"):
            return None
        repo = f"https://{repo}"
    path = re.sub(r"\.git$", "", path).lstrip("/")
    if not host or len(path.split("/")) < 2 or _unsafe(host, False) or _unsafe(path, True):
        return None
    return GitSource(repo, host, path, ref)


def source_string(entry: Any) -> str | None:
    """The source of a ``packages`` entry: the string, or an object's ``source``."""
    if isinstance(entry, str):
        return entry
    if isinstance(entry, dict) and isinstance(entry.get("source"), str):
        return entry["source"]
    return None


# ---------------------------------------------------------------- where pi keeps them


def base_dir(scope: str, agent_dir: Path, cwd: Path) -> Path:
    """The folder a scope's relative local paths start from (its settings file's)."""
    return cwd / ".pi" if scope == "project" else agent_dir


def resolve_local(path: str, base: Path) -> Path:
    expanded = os.path.expanduser(path.strip())
    return Path(os.path.abspath(os.path.join(base, expanded)))


def npm_root(scope: str, agent_dir: Path, cwd: Path) -> Path:
    """The npm project folder pi 1.6 installs a scope's npm packages into."""
    return (cwd / ".pi" / "npm") if scope == "project" else (agent_dir / "npm")


def git_root(scope: str, agent_dir: Path, cwd: Path) -> Path:
    return (cwd / ".pi" / "git") if scope == "project" else (agent_dir / "git")


def global_npm_root() -> Path | None:
    """Where ``npm install -g`` puts packages (``npm root -g``), found without running
    npm: ``npm_config_prefix``/``PREFIX``, else next to the ``node`` on PATH. pi 0.73.1
    installed user packages there."""
    prefix = os.environ.get("npm_config_prefix") or os.environ.get("NPM_CONFIG_PREFIX") or os.environ.get("PREFIX")
    if not prefix:
        node = shutil.which("node")
        if node is None:
            return None
        prefix = str(Path(os.path.realpath(node)).parent.parent)
    return Path(prefix) / "lib" / "node_modules"


def installed_path(source: Source, scope: str, agent_dir: Path, cwd: Path) -> Path | None:
    """Where a configured package is, or ``None`` when it is not there (not installed)."""
    if isinstance(source, NpmSource):
        managed = npm_root(scope, agent_dir, cwd) / "node_modules" / source.name
        if managed.exists() or scope != "user":
            return managed if managed.exists() else None
        legacy = global_npm_root()
        return legacy / source.name if legacy is not None and (legacy / source.name).exists() else None
    if isinstance(source, GitSource):
        path = git_root(scope, agent_dir, cwd) / source.host / source.path
        return path if path.exists() else None
    path = resolve_local(source.path, base_dir(scope, agent_dir, cwd))
    return path if path.exists() else None


def managed_path(source: NpmSource | GitSource, scope: str, agent_dir: Path, cwd: Path) -> Path:
    """Where ``pi install`` puts a package of this scope."""
    if isinstance(source, NpmSource):
        return npm_root(scope, agent_dir, cwd) / "node_modules" / source.name
    return git_root(scope, agent_dir, cwd) / source.host / source.path


def identity(source: Source, scope: str, agent_dir: Path, cwd: Path) -> str:
    if isinstance(source, LocalSource):
        return f"local:{resolve_local(source.path, base_dir(scope, agent_dir, cwd))}"
    return source.identity
