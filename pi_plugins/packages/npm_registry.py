"""Fetching npm packages without Node or npm: the registry npm is configured to use
(``npm_config_registry`` in the environment, then ``registry=`` in the install root's
``.npmrc``, the user's ``~/.npmrc``; scoped ``@scope:registry=`` and ``//host/:_authToken=``
too; ``https://registry.npmjs.org/`` by default), the packument (``GET <registry>/<name>``),
the version npm would pick, and the tarball checked against its published
``dist.integrity`` (sha512, else the sha1 ``shasum``) before a byte of it is used.

Everything is fetched and checked in memory first (:func:`resolve_tree`); only then does
:func:`unpack` write, so a bad tarball installs nothing.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from attrs import define, field

from pi_plugins.packages import semver

DEFAULT_REGISTRY = "https://registry.npmjs.org/"
_ABBREVIATED = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*"


class NpmError(Exception):
    """Why an npm package cannot be installed (nothing was written)."""


# ---------------------------------------------------------------- configuration


def _npmrc(path: Path) -> dict[str, str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    found = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")) or "=" not in line:
            continue
        key, _, value = line.partition("=")
        value = re.sub(r"\$\{([^}]+)\}", lambda m: os.environ.get(m.group(1), ""), value.strip().strip('"'))
        found[key.strip()] = value
    return found


@define
class NpmConfig:
    """What npm's configuration says about registries and their tokens."""

    values: dict[str, str] = field(factory=dict)

    @classmethod
    def load(cls, root: Path | None = None) -> NpmConfig:
        """Lowest precedence first: the user's ``.npmrc``, the install root's, then the
        ``npm_config_*`` environment."""
        values: dict[str, str] = {}
        user = os.environ.get("npm_config_userconfig") or os.environ.get("NPM_CONFIG_USERCONFIG")
        values.update(_npmrc(Path(user) if user else Path.home() / ".npmrc"))
        if root is not None:
            values.update(_npmrc(root / ".npmrc"))
        for key, value in os.environ.items():
            if key.lower().startswith("npm_config_"):
                values[key[len("npm_config_"):].lower().replace("_", "-")] = value
        return cls(values)

    def registry(self, name: str) -> str:
        scope = name.split("/", 1)[0] if name.startswith("@") else None
        url = (scope and self.values.get(f"{scope}:registry")) or self.values.get("registry") or DEFAULT_REGISTRY
        return url if url.endswith("/") else url + "/"

    def headers(self, url: str) -> dict[str, str]:
        """The credentials ``.npmrc`` gives for ``url`` (``//host/path/:_authToken``)."""
        parts = urlsplit(url)
        path = f"//{parts.netloc}{parts.path}"
        while path.count("/") >= 3:
            token = self.values.get(f"{path.rstrip('/')}/:_authToken")
            if token:
                return {"Authorization": f"Bearer {token}"}
            auth = self.values.get(f"{path.rstrip('/')}/:_auth")
            if auth:
                return {"Authorization": f"Basic {auth}"}
            path = path.rstrip("/").rsplit("/", 1)[0] + "/"
        return {}


# ---------------------------------------------------------------- the registry


@define
class Fetched:
    """One package version, fetched and checked: its manifest and tarball bytes."""

    name: str
    version: str
    manifest: dict
    tarball: bytes
    integrity: str
    location: str = ""  # where it goes under the root: node_modules/NAME[/node_modules/...]


class Registry:
    """An HTTP client on npm's configuration; packuments are fetched once."""

    def __init__(self, config: NpmConfig, client: Any = None) -> None:
        import httpx

        self.config = config
        self.client = client or httpx.Client(timeout=60, follow_redirects=True)
        self._packuments: dict[str, dict] = {}

    def packument(self, name: str) -> dict:
        if name in self._packuments:
            return self._packuments[name]
        url = self.config.registry(name) + quote(name, safe="@")
        headers = {"Accept": _ABBREVIATED, **self.config.headers(url)}
        response = self._get(url, headers, f"{name}'s metadata")
        if response.status_code == 404:
            raise NpmError(f"npm package {name} not found in the registry {self.config.registry(name)}")
        try:
            data = response.json()
        except ValueError:
            raise NpmError(f"{url}: the registry did not answer with JSON") from None
        if not isinstance(data, dict) or not isinstance(data.get("versions"), dict):
            raise NpmError(f"{url}: the registry's answer has no versions")
        self._packuments[name] = data
        return data

    def _get(self, url: str, headers: dict, what: str) -> Any:
        import httpx

        try:
            response = self.client.get(url, headers=headers)
        except httpx.HTTPError as exc:
            raise NpmError(f"cannot fetch {what} from {url}: {exc}") from None
        if response.status_code >= 400 and response.status_code != 404:
            raise NpmError(f"cannot fetch {what} from {url}: HTTP {response.status_code}")
        return response

    def pick(self, name: str, wanted: str | None) -> str:
        """The version npm installs for ``wanted`` (a version, range or dist-tag)."""
        data = self.packument(name)
        tags = data.get("dist-tags") or {}
        wanted = (wanted or "latest").strip()
        if wanted in tags:
            return tags[wanted]
        versions = list(data["versions"])
        if wanted in versions:
            return wanted
        latest = tags.get("latest")
        if isinstance(latest, str) and latest in versions and semver.satisfies(latest, wanted):
            return latest  # npm prefers the latest tag when it matches
        found = semver.max_satisfying(versions, wanted)
        if found is None:
            raise NpmError(f"no version of {name} matches {wanted!r} (latest is {latest})")
        return found

    def fetch(self, name: str, version: str) -> Fetched:
        """The tarball of ``name@version``, checked against the published integrity."""
        manifest = self.packument(name)["versions"][version]
        dist = manifest.get("dist") or {}
        url = dist.get("tarball")
        if not isinstance(url, str):
            raise NpmError(f"{name}@{version}: the registry gives no tarball")
        response = self._get(url, self.config.headers(url), f"{name}@{version}")
        if response.status_code == 404:
            raise NpmError(f"{name}@{version}: tarball not found at {url}")
        data = response.content
        integrity = check_integrity(f"{name}@{version}", data, dist)
        return Fetched(name, version, manifest, data, integrity)


def check_integrity(label: str, data: bytes, dist: dict) -> str:
    """The SRI string ``data`` matched; :class:`NpmError` when it does not match or the
    registry publishes nothing to check it against."""
    integrity = dist.get("integrity")
    if isinstance(integrity, str) and integrity.strip():
        hashes = dict(h.split("-", 1) for h in integrity.split() if "-" in h)
        for algorithm in ("sha512", "sha384", "sha256"):
            if algorithm in hashes:
                expected = hashes[algorithm].split("?", 1)[0]
                actual = base64.b64encode(hashlib.new(algorithm, data).digest()).decode()
                if actual != expected:
                    raise NpmError(
                        f"{label}: integrity check failed: the registry publishes "
                        f"{algorithm}-{expected} but the tarball downloaded is {algorithm}-{actual}; "
                        "nothing was installed")
                return f"{algorithm}-{actual}"
    shasum = dist.get("shasum")
    if isinstance(shasum, str) and shasum:
        actual = hashlib.sha1(data).hexdigest()
        if actual != shasum.lower():
            raise NpmError(f"{label}: integrity check failed: the registry publishes sha1 {shasum} "
                           f"but the tarball downloaded is {actual}; nothing was installed")
        return "sha1-" + base64.b64encode(hashlib.sha1(data).digest()).decode()
    raise NpmError(f"{label}: the registry publishes no integrity for its tarball; refusing to install it")


# ---------------------------------------------------------------- the dependency tree


def lookup_places(location: str, name: str) -> list[str]:
    """Where Node looks for ``name`` from the package at ``location`` (relative to the
    root, ``""`` for the root itself): its own ``node_modules``, then each one above."""
    if not location:
        return [f"node_modules/{name}"]
    chain = location.split("/node_modules/")
    return [("/node_modules/".join(chain[:i]) + f"/node_modules/{name}").lstrip("/")
            for i in range(len(chain), -1, -1)]


def _installed_version(folder: Path) -> str | None:
    import json

    try:
        data = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    version = data.get("version") if isinstance(data, dict) else None
    return version if isinstance(version, str) else None


def resolve_tree(registry: Registry, root: Path, name: str, wanted: str | None) -> list[Fetched]:
    """``name`` and its runtime ``dependencies``, placed as npm places them under
    ``root``: each at the top of ``node_modules`` unless a different version is already
    reachable there, then nested under the package that needs it. A version already on
    disk that satisfies a range is kept. Peer dependencies are the host's (pi's
    ``--legacy-peer-deps``); optional ones are left out."""
    top = Fetched(name, registry.pick(name, wanted), {}, b"", "", f"node_modules/{name}")
    fetched = registry.fetch(top.name, top.version)
    fetched.location = top.location
    planned: dict[str, Fetched] = {fetched.location: fetched}
    queue = [fetched]
    while queue:
        parent = queue.pop(0)
        dependencies = parent.manifest.get("dependencies") or {}
        for dep, range_text in sorted(dependencies.items()):
            if not isinstance(range_text, str):
                continue
            found_at = None
            for place in lookup_places(parent.location, dep):
                replaced = place == top.location or place.startswith(top.location + "/")
                version = planned[place].version if place in planned else (
                    None if replaced else _installed_version(root / place))
                if version is not None:
                    found_at = (place, version)
                    break
            if found_at is not None and (semver.satisfies(found_at[1], range_text) or range_text.startswith(
                    ("file:", "git", "http", "npm:", "link:", "workspace:"))):
                continue
            version = registry.pick(dep, range_text)
            place = f"{parent.location}/node_modules/{dep}" if found_at is not None else f"node_modules/{dep}"
            child = registry.fetch(dep, version)
            child.location = place
            planned[place] = child
            queue.append(child)
    return list(planned.values())


def unpack(fetched: Fetched, root: Path) -> None:
    """Unpack a checked tarball into ``root/<location>``, replacing what was there:
    every entry loses its first folder (``package/``), and tarfile's ``data`` filter
    refuses links and paths that lead outside."""
    target = root / fetched.location
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.parent / f".{target.name}.pi-unpack-{os.getpid()}"
    _remove_tree(staging)
    try:
        with tarfile.open(fileobj=io.BytesIO(fetched.tarball), mode="r:gz") as archive:
            members = []
            for member in archive.getmembers():
                _, _, rest = member.name.lstrip("./").partition("/")
                if not rest:
                    continue
                member.name = rest
                members.append(member)
            archive.extractall(staging, members=members, filter="data")
    except (tarfile.TarError, OSError, EOFError) as exc:
        _remove_tree(staging)
        raise NpmError(f"{fetched.name}@{fetched.version}: cannot unpack the tarball: {exc}") from None
    old = target.parent / f".{target.name}.pi-old-{os.getpid()}"
    if target.exists():
        os.replace(target, old)
    os.replace(staging, target)
    _remove_tree(old)


def _remove_tree(path: Path) -> None:
    import shutil

    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)
