"""A temporary git repository the way a user has one: a commit, a staged change, an
untracked file, an ignored file, an executable script."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.workspaces import user_git


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "a.txt").write_text("alpha\nbeta\n")
    (root / "b.txt").write_text("to be removed\n")
    (root / "notes.md").write_text("x marks the spot\n")
    (root / "src" / "gen.py").write_text("print('generated')\n")
    (root / "run.sh").write_text("#!/bin/sh\necho run\n")
    (root / "run.sh").chmod(0o755)
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    user_git(root, "init", "-q")
    user_git(root, "add", "-A")
    user_git(root, "commit", "-qm", "start")
    (root / "staged.txt").write_text("staged by the user\n")
    user_git(root, "add", "staged.txt")
    (root / "untracked.txt").write_text("the user's scratch\n")
    (root / "keep.log").write_text("ignored, never touched\n")
    return root
