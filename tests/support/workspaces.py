"""Looking at a user's git repository without changing it: its files' hash, its .git
folder's hash, read-only git commands."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

LIMIT = 1 << 20


def user_git(repo: Path, *args: str) -> str:
    """git as the user runs it, read-only: optional locks off, so not even ``status``
    refreshes the index."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_AUTHOR_NAME="u", GIT_AUTHOR_EMAIL="u@x",
               GIT_COMMITTER_NAME="u", GIT_COMMITTER_EMAIL="u@x")
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, check=True)
    return done.stdout.decode()


def workspace_hash(repo: Path) -> str:
    """A hash of every tracked and untracked (not ignored) file the checkpoints cover:
    path, executable bit and content."""
    digest = hashlib.sha256()
    listed = user_git(repo, "ls-files", "-z", "-c", "-o", "--exclude-standard").split("\0")
    for name in sorted({n for n in listed if n}):
        path = repo / name
        if not os.path.lexists(path):
            continue  # tracked by the user's index but deleted
        if path.is_symlink():
            digest.update(f"{name}\0link\0{os.readlink(path)}\0".encode())
            continue
        if path.stat().st_size > LIMIT:
            continue
        digest.update(f"{name}\0{os.access(path, os.X_OK)}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def git_dir_hash(repo: Path) -> str:
    """Every file of the user's .git folder, names and contents: equal means untouched."""
    digest = hashlib.sha256()
    for path in sorted((repo / ".git").rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(repo)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()
