"""Snapshots of a workspace in a private git object store, by git plumbing.

Every git command here runs with its own ``GIT_DIR`` (under the agent dir) and its own
``GIT_INDEX_FILE``, with the user's work tree as ``GIT_WORK_TREE``: the user's repository,
its index and its refs are never read or written by git, not even by ``git status`` (which
may rewrite an index). Inherited ``GIT_*`` variables are dropped so a hook environment
cannot point a command back at the user's repository.

A snapshot is a git *tree* id of the files under the cwd that ``.gitignore`` (the work
tree's, the user's global excludes and the user's ``.git/info/exclude``, copied) does not
ignore and that are at most ``max_file_bytes`` long. The private index caches file stats,
so a snapshot lists what changed since the last one (``git diff-files`` for tracked files
and ``git ls-files -o`` for new ones, run side by side) and hashes only those files.
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from contextlib import contextmanager
from pathlib import Path

from attrs import define, field

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Windows: one pi at a time is up to you
    fcntl = None  # type: ignore[assignment]  # the module or None: the lock tests for None

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
#: git settings that keep a command from reaching outside our store (fsmonitor daemons),
#: changing file contents on the way in (line endings) or pruning our objects (gc); and
#: a split, version-4 index, so a snapshot rewrites a small file, not all of a large one.
CONFIG = ("core.fsmonitor=false", "core.autocrlf=false", "core.safecrlf=false",
          "core.quotePath=false", "gc.auto=0", "core.untrackedCache=false",
          "core.splitIndex=true", "index.version=4")


class StoreError(RuntimeError):
    """git failed (its message is in the text) or is missing."""


@define
class Change:
    """One path that differs between two snapshots (``new_blob`` None: deleted)."""

    path: str
    old_mode: str | None
    new_mode: str | None
    old_blob: str | None
    new_blob: str | None


@define
class Restored:
    """What writing a snapshot back did: ``files`` changed, ``skipped`` left alone (why)."""

    files: list[str] = field(factory=list)
    skipped: dict[str, str] = field(factory=dict)


def find_work_tree(cwd: str | os.PathLike) -> Path | None:
    """The root of the git work tree holding ``cwd`` (a folder with ``.git``), found by
    looking at the file system, never by running git."""
    path = Path(cwd).resolve()
    for folder in (path, *path.parents):
        if (folder / ".git").exists():
            return folder
    return None


def store_dir(agent_dir: Path, work_tree: Path) -> Path:
    """``<agent dir>/checkpoints/<name>-<hash of the work tree's path>``: one object store
    per work tree, shared by its sessions."""
    digest = hashlib.sha1(str(work_tree).encode()).hexdigest()[:16]
    return Path(agent_dir) / "checkpoints" / f"{work_tree.name or 'root'}-{digest}"


class GitStore:
    """The object store of one work tree, seen from ``cwd`` (snapshots cover ``cwd``)."""

    def __init__(self, cwd: str | os.PathLike, agent_dir: str | os.PathLike, *,
                 max_file_bytes: int = 1 << 20, work_tree: Path | None = None) -> None:
        self.cwd = Path(cwd).resolve()
        self.work_tree = (work_tree or find_work_tree(self.cwd) or self.cwd).resolve()
        self.agent_dir = Path(agent_dir).resolve()
        self.dir = store_dir(self.agent_dir, self.work_tree)
        self.git_dir = self.dir / "git"
        self.index = self.dir / "index"
        self.max_file_bytes = max_file_bytes
        self._env: dict | None = None
        #: (the index file's identity, its tree) after our last write-tree
        self._last: tuple[tuple | None, str] | None = None

    # ------------------------------------------------------------ git

    @property
    def env(self) -> dict:
        if self._env is None:
            env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
            env.update(GIT_DIR=str(self.git_dir), GIT_WORK_TREE=str(self.work_tree),
                       GIT_INDEX_FILE=str(self.index), GIT_OPTIONAL_LOCKS="0",
                       GIT_TERMINAL_PROMPT="0", GIT_CONFIG_NOSYSTEM="1", LC_ALL="C")
            self._env = env
        return self._env

    def _command(self, args) -> list[str]:
        command = ["git"]
        for setting in CONFIG:
            command += ["-c", setting]
        return command + list(args)

    def git(self, *args: str, input: bytes | None = None) -> bytes:
        return self._wait(self._start(*args, stdin=input is not None), args, input)

    def _start(self, *args: str, stdin: bool = False) -> subprocess.Popen:
        try:
            return subprocess.Popen(self._command(args), cwd=self.cwd, env=self.env,
                                    stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except FileNotFoundError as exc:
            raise StoreError("git is not installed (checkpoints need it)") from exc

    @staticmethod
    def _wait(process: subprocess.Popen, args, input: bytes | None = None) -> bytes:
        out, err = process.communicate(input)
        if process.returncode != 0:
            raise StoreError(f"git {args[0]} failed: {err.decode(errors='replace').strip()}")
        return out

    def open(self) -> GitStore:
        """Create the store on first use; refresh its copy of the user's excludes."""
        if not (self.git_dir / "HEAD").exists():
            self.dir.mkdir(parents=True, exist_ok=True)
            self.git("init", "-q")
        self._write_excludes()
        return self

    def _write_excludes(self) -> None:
        """Our ``info/exclude``: the user's own ``.git/info/exclude`` (read as a file), and
        the agent dir when it lies inside the work tree (the store must not snapshot itself)."""
        lines = []
        user_git = self.work_tree / ".git"
        if user_git.is_dir():
            try:
                lines.append((user_git / "info" / "exclude").read_text(encoding="utf-8", errors="replace"))
            except OSError:
                pass
        for inside in (self.agent_dir, self.dir):
            try:
                lines.append("/" + inside.relative_to(self.work_tree).as_posix() + "/")
            except ValueError:
                pass
        text = "\n".join(lines) + "\n"
        target = self.git_dir / "info" / "exclude"
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_text(encoding="utf-8", errors="replace") != text:
            target.write_text(text, encoding="utf-8")

    @contextmanager
    def locked(self):
        """One pi at a time in this store (its sessions share the index). A store that
        was deleted meanwhile is made again."""
        if not (self.git_dir / "HEAD").exists():
            self._last = None
            self.open()
        with open(self.dir / "pi.lock", "a") as handle:
            if fcntl is not None:
                fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                if fcntl is not None:
                    fcntl.flock(handle, fcntl.LOCK_UN)

    def _index_identity(self) -> tuple | None:
        try:
            info = os.stat(self.index)
        except FileNotFoundError:
            return None
        return (info.st_ino, info.st_size, info.st_mtime_ns)

    # ------------------------------------------------------------ snapshots

    def snapshot(self) -> str:
        """The tree id of the workspace as it is now (under the cwd, not ignored, small)."""
        return self.checkpoint(None)[0]

    def checkpoint(self, since: str | None) -> tuple[str, list[str]]:
        """A snapshot, and the paths (relative to the cwd) that differ from the snapshot
        ``since`` (none when ``since`` is None): what a checkpoint records."""
        with self.locked():
            return self._checkpoint(since)

    def _checkpoint(self, since: str | None) -> tuple[str, list[str]]:
        # Changed and deleted tracked files, and untracked ones: two walks, run at once.
        changed_args = ("diff-files", "--name-only", "-z", "--relative", "--ignore-submodules")
        untracked_args = ("ls-files", "-z", "-o", "--exclude-standard", "--", ".")
        changed = self._start(*changed_args)
        untracked = self._start(*untracked_args)
        listed = self._wait(changed, changed_args) + b"\0" + self._wait(untracked, untracked_args)
        update, drop = [], []
        linked: dict[str, bool] = {}
        for raw in set(listed.split(b"\0")):
            if not raw or raw.endswith(b"/"):  # a nested repository: not ours to copy
                continue
            path = os.fsdecode(raw)
            if self._behind_link(os.path.dirname(path), linked):
                drop.append(raw)  # now behind a link: out of the index
                continue
            try:
                info = os.lstat(self.cwd / path)
            except FileNotFoundError:
                update.append(raw)  # gone: --remove takes it out of the index
                continue
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and info.st_size > self.max_file_bytes:
                drop.append(raw)  # too large: left out (and out of the index if it was in)
            elif stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
                update.append(raw)
        if drop:  # --force-remove of a path that is not in the index does nothing
            self.git("update-index", "-z", "--force-remove", "--stdin", input=b"\0".join(drop) + b"\0")
        if update:  # --replace: a file may take a folder's place, and back
            self.git("update-index", "-z", "--add", "--remove", "--replace", "--stdin",
                     input=b"\0".join(sorted(update)) + b"\0")
        if not update and not drop and self._last is not None and self._last[0] == self._index_identity():
            tree = self._last[1]
            return tree, [c.path for c in self.diff(since, tree)] if since else []
        # The tree, and what changed since ``since`` (index against that tree), at once.
        compare_args = ("diff-index", "--cached", "--name-only", "-z", "--relative",
                        "--no-renames", since or EMPTY_TREE, "--")
        compare = self._start(*compare_args) if since else None
        tree = self.git("write-tree").decode().strip()
        self._last = (self._index_identity(), tree)
        if compare is None:
            return tree, []
        paths = self._wait(compare, compare_args).split(b"\0")
        return tree, sorted(os.fsdecode(p) for p in paths if p)

    def _behind_link(self, folder: str, seen: dict[str, bool]) -> bool:
        """Whether a folder of a listed path is, or lies under, a symbolic link."""
        if not folder:
            return False
        if folder not in seen:
            # self.cwd is resolved, so any difference is a link on the way.
            seen[folder] = os.path.realpath(self.cwd / folder) != os.path.join(str(self.cwd), folder)
        return seen[folder]

    def diff(self, old: str | None, new: str) -> list[Change]:
        """The paths (relative to the cwd) that differ from ``old`` to ``new``."""
        old = old or EMPTY_TREE
        if old == new:
            return []
        out = self.git("diff-tree", "-r", "-z", "--no-renames", "--relative", old, new)
        fields = out.split(b"\0")
        changes = []
        for i in range(0, len(fields) - 1, 2):
            meta = fields[i].decode()
            if not meta.startswith(":"):
                continue
            old_mode, new_mode, old_blob, new_blob, status = meta[1:].split(" ")
            path = os.fsdecode(fields[i + 1])
            changes.append(Change(
                path=path,
                old_mode=None if status == "A" else old_mode,
                new_mode=None if status == "D" else new_mode,
                old_blob=None if status == "A" else old_blob,
                new_blob=None if status == "D" else new_blob,
            ))
        return changes

    def has(self, tree: str) -> bool:
        try:
            return self.git("cat-file", "-t", tree).strip() == b"tree"
        except StoreError:
            return False

    def read_blobs(self, ids: list[str]) -> dict[str, bytes]:
        """The contents of blobs by id (one ``cat-file --batch`` for all of them)."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        out = self.git("cat-file", "--batch", input="".join(f"{i}\n" for i in wanted).encode())
        blobs, pos = {}, 0
        for blob_id in wanted:
            end = out.index(b"\n", pos)
            header = out[pos:end].decode().split(" ")
            if len(header) != 3:
                raise StoreError(f"object {blob_id} is missing from the checkpoint store")
            size = int(header[2])
            blobs[blob_id] = out[end + 1:end + 1 + size]
            pos = end + 1 + size + 1
        return blobs

    # ------------------------------------------------------------ restoring

    def restore(self, current: str, target: str) -> Restored:
        """Make the workspace's covered files those of ``target``: write back the files
        that differ from ``current`` (the snapshot just taken of the workspace) and delete
        those ``target`` lacks. Files no snapshot covers (ignored, too large, outside the
        cwd, behind a link leaving it) are left alone and listed in ``skipped``."""
        with self.locked():
            return self._restore(current, target)

    def _restore(self, current: str, target: str) -> Restored:
        done = Restored()
        changes = self.diff(current, target)
        blobs = self.read_blobs([c.new_blob for c in changes
                                 if c.new_blob and c.new_mode != "160000"])
        root = os.path.realpath(self.cwd)
        # Deletions first, so a file may take the place of a folder and back.
        for change in sorted(changes, key=lambda c: c.new_blob is not None):
            path = self.cwd / change.path
            if not _inside(root, path.parent):
                done.skipped[change.path] = "outside the working directory"
                continue
            if "160000" in (change.old_mode, change.new_mode):
                done.skipped[change.path] = "a nested repository"
                continue
            if change.old_blob is not None:  # covered now: ours to replace or delete
                if change.new_blob is None:
                    _remove(path, root)
                    done.files.append(change.path)
                    continue
            elif os.path.lexists(path):
                done.skipped[change.path] = "exists but no checkpoint covers it"
                continue
            # Neither deleted (above) nor absent on both sides: a new blob, with its mode.
            assert change.new_blob is not None and change.new_mode is not None
            try:
                _write(path, blobs[change.new_blob], change.new_mode, root)
            except OSError as exc:
                done.skipped[change.path] = f"cannot write: {exc}"
                continue
            done.files.append(change.path)
        done.files.sort()
        return done


def _inside(root: str, folder: Path) -> bool:
    real = os.path.realpath(folder)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def _remove(path: Path, root: str) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    folder = path.parent
    while os.path.realpath(folder) != root and _inside(root, folder):
        try:
            folder.rmdir()  # only an empty folder goes, as git checkout does
        except OSError:
            break
        folder = folder.parent


def _write(path: Path, data: bytes, mode: str, root: str) -> None:
    folder = path.parent
    if not folder.is_dir():
        if os.path.lexists(folder):
            raise OSError(f"{folder} is not a folder")
        folder.mkdir(parents=True, exist_ok=True)
        if not _inside(root, folder):
            raise OSError("outside the working directory")
    temp = folder / f".{path.name}.pi-restore-{os.getpid()}"
    if mode == "120000":
        if os.path.lexists(temp):
            temp.unlink()
        os.symlink(os.fsdecode(data), temp)
    else:
        with open(temp, "wb") as handle:
            handle.write(data)
        current = os.umask(0)
        os.umask(current)
        os.chmod(temp, (0o777 if mode == "100755" else 0o666) & ~current)
    os.replace(temp, path)
