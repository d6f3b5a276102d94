"""pi packages from git, kept as pi 1.6 keeps them: cloned into
``<git root>/<host>/<owner>/<repo>`` and checked out at the ref the source names; an
install over an existing clone, and ``pi update``, fetch only that ref (or, without one,
the branch the clone tracks) and reset the clone to it, then remove untracked files. A
marker ``.<repo>.pi-update-incomplete`` beside the clone says an update was cut short (the
next one cleans up again). The clone's runtime ``dependencies`` are installed into its own
``node_modules`` from the npm registry (:mod:`.npm_registry`), as pi's ``npm install
--omit=dev`` does, so pi can load the package's extensions from the same agent dir.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from pi_plugins.packages import sources
from pi_plugins.packages.npm_registry import NpmConfig, NpmError, Registry, resolve_tree, unpack

GITIGNORE = "*\n!.gitignore\n"


class GitError(NpmError):
    """A git command failed; the message carries git's own words."""


def git(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Run git without ever prompting (no terminal questions, ssh in batch mode)."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env,
                              stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise GitError("git is not installed; git packages need it") from None


def _run(*args: str, cwd: Path | None = None, what: str | None = None) -> str:
    done = git(*args, cwd=cwd)
    if done.returncode != 0:
        said = [line for line in (done.stderr or done.stdout).splitlines()
                if line.strip() and not line.startswith("Cloning into")]
        where = f" in {cwd}" if cwd is not None and what is None else ""
        raise GitError(f"git {what or ' '.join(args)} failed{where}: {' '.join(said) or f'exit {done.returncode}'}")
    return done.stdout.strip()


def marker(target: Path) -> Path:
    return target.parent / f".{target.name}.pi-update-incomplete"


def head(target: Path) -> str | None:
    """The commit a clone has checked out, or ``None`` when there is no clone."""
    if not target.exists():
        return None
    done = git("rev-parse", "HEAD", cwd=target)
    return (done.stdout.strip() or None) if done.returncode == 0 else None


def install_git(source: sources.GitSource, target: Path, root: Path) -> None:
    """Clone ``source`` into ``target`` at its ref, or bring an existing clone to it.
    A failed clone leaves nothing behind."""
    if target.exists():
        _reconcile(source, target)
        return
    root.mkdir(parents=True, exist_ok=True)
    if not (root / ".gitignore").exists():
        (root / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
    target.parent.mkdir(parents=True, exist_ok=True)
    marker(target).unlink(missing_ok=True)
    try:
        _run("clone", source.repo, str(target), what=f"clone {source.repo}")
        if source.ref:
            _run("checkout", source.ref, cwd=target, what=f"checkout {source.ref}")
        install_dependencies(target)
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        prune_empty_parents(target, root)
        raise


def update_git(source: sources.GitSource, target: Path, root: Path) -> tuple[str | None, str | None]:
    """Bring the clone to its ref (cloning it when missing); the commits before and after."""
    before = head(target)
    install_git(source, target, root)
    return before, head(target)


def _reconcile(source: sources.GitSource, target: Path) -> None:
    if source.ref:
        _ensure_ref(target, ("fetch", "origin", source.ref), "FETCH_HEAD")
        return
    fetch, ref = _tracking_target(target)
    _ensure_ref(target, fetch, ref)


def _tracking_target(target: Path) -> tuple[tuple[str, ...], str]:
    """What an unpinned clone follows: the branch it tracks, else the remote's HEAD."""
    upstream = git("rev-parse", "--abbrev-ref", "@{upstream}", cwd=target)
    branch = upstream.stdout.strip()
    if upstream.returncode == 0 and branch.startswith("origin/") and branch != "origin/":
        name = branch[len("origin/"):]
        return ("fetch", "--prune", "--no-tags", "origin", f"+refs/heads/{name}:refs/remotes/origin/{name}"), \
            "@{upstream}"
    git("remote", "set-head", "origin", "-a", cwd=target)
    return ("fetch", "--prune", "--no-tags", "origin", "+HEAD:refs/remotes/origin/HEAD"), "origin/HEAD"


def _ensure_ref(target: Path, fetch: tuple[str, ...], ref: str) -> None:
    _run(*fetch, cwd=target)
    wanted = _run("rev-parse", f"{ref}^{{commit}}", cwd=target)
    pending = marker(target)
    if head(target) == wanted:
        if pending.exists():
            _clean(target, pending)
        else:
            install_dependencies(target, only_missing=True)
        return
    pending.write_text("", encoding="utf-8")
    _run("reset", "--hard", f"{ref}^{{commit}}", cwd=target)
    _clean(target, pending)


def _clean(target: Path, pending: Path) -> None:
    _run("clean", "-fdx", cwd=target)
    install_dependencies(target)
    pending.unlink(missing_ok=True)


def install_dependencies(folder: Path, only_missing: bool = False) -> int:
    """Install the runtime ``dependencies`` of ``folder/package.json`` into its own
    ``node_modules`` (none: nothing is fetched); how many packages were written."""
    try:
        manifest = json.loads((folder / "package.json").read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        return 0
    except ValueError as exc:
        raise NpmError(f"{folder / 'package.json'} is not valid JSON ({exc})") from None
    wanted = manifest.get("dependencies") if isinstance(manifest, dict) else None
    if not isinstance(wanted, dict) or not wanted:
        return 0
    if only_missing and all((folder / "node_modules" / name).exists() for name in wanted):
        return 0
    registry = Registry(NpmConfig.load(folder))
    count = 0
    for name, range_text in sorted(wanted.items()):
        if not isinstance(range_text, str):
            continue
        tree = resolve_tree(registry, folder, name, range_text)
        for fetched in tree:
            unpack(fetched, folder)
        count += len(tree)
    return count


def remove_git(target: Path, root: Path) -> None:
    """Delete a clone, its update marker and the folders above it it leaves empty."""
    shutil.rmtree(target, ignore_errors=True)
    marker(target).unlink(missing_ok=True)
    prune_empty_parents(target, root)


def prune_empty_parents(target: Path, root: Path) -> None:
    folder = target.parent
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            break
        folder = folder.parent
