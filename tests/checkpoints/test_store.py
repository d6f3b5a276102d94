"""The private snapshot store: what a snapshot covers, what a restore may touch, and that
git never looks at the user's repository."""

from __future__ import annotations

import os
import subprocess

import pytest

from pi_plugins.checkpoints.store import GitStore, find_work_tree
from support.workspaces import git_dir_hash, user_git

pytestmark = pytest.mark.requires("git")


def paths(store, old, new):
    return sorted(c.path for c in store.diff(old, new))


def tree_files(store, tree):
    out = store.git("ls-tree", "-r", "--full-tree", "--name-only", "-z", tree).decode()
    return sorted(p for p in out.split("\0") if p)


def test_a_snapshot_leaves_out_ignored_files_large_files_and_the_user_git_folder(repo, tmp_path):
    (repo / "build").mkdir()
    (repo / "build" / "out.o").write_text("object")
    (repo / "huge.bin").write_bytes(b"\0" * 2000)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("secret.txt\n")
    (repo / "secret.txt").write_text("excluded by the user's info/exclude")
    store = GitStore(repo, tmp_path / "agent", max_file_bytes=1000).open()
    files = tree_files(store, store.snapshot())
    assert files == [".gitignore", "a.txt", "b.txt", "notes.md", "run.sh", "src/gen.py",
                     "staged.txt", "untracked.txt"]


def test_a_file_that_grows_over_the_limit_leaves_the_snapshot_and_a_restore_leaves_it_alone(repo, tmp_path):
    store = GitStore(repo, tmp_path / "agent", max_file_bytes=100).open()
    before = store.snapshot()
    (repo / "a.txt").write_bytes(b"x" * 500)
    grown = store.snapshot()
    assert "a.txt" not in tree_files(store, grown)
    done = store.restore(grown, before)
    assert done.files == [] and "a.txt" in done.skipped
    assert (repo / "a.txt").read_bytes() == b"x" * 500  # its only copy is kept


def test_snapshots_from_a_subfolder_cover_only_it_and_honour_the_root_gitignore(repo, tmp_path):
    sub = repo / "src"
    (sub / "debug.log").write_text("ignored by the root .gitignore")
    (repo / "outside.txt").write_text("above the cwd")
    store = GitStore(sub, tmp_path / "agent").open()
    first = store.snapshot()
    assert tree_files(store, first) == ["src/gen.py"]
    (sub / "gen.py").write_text("changed\n")
    (sub / "more.py").write_text("new\n")
    (repo / "outside.txt").write_text("changed above the cwd")
    second = store.snapshot()
    assert paths(store, first, second) == ["gen.py", "more.py"]  # relative to the cwd
    done = store.restore(second, first)
    assert done.files == ["gen.py", "more.py"]
    assert (sub / "gen.py").read_text() == "print('generated')\n" and not (sub / "more.py").exists()
    assert (repo / "outside.txt").read_text() == "changed above the cwd"


def _folder_become_a_link(repo, tmp_path):
    """A checkpoint with the folder ``sub`` (holding ``f.txt``), after which ``sub``
    became a link to a folder outside: (store, that checkpoint, the outside folder)."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    store = GitStore(repo, tmp_path / "agent").open()
    (repo / "sub").mkdir()
    (repo / "sub" / "f.txt").write_text("inside\n")
    with_folder = store.snapshot()
    (repo / "sub" / "f.txt").unlink()
    (repo / "sub").rmdir()
    os.symlink(outside, repo / "sub")
    return store, with_folder, outside


def test_a_restore_replaces_a_covered_link_with_the_folder_it_was(repo, tmp_path):
    store, with_folder, outside = _folder_become_a_link(repo, tmp_path)
    done = store.restore(store.snapshot(), with_folder)
    assert done.files == ["sub", "sub/f.txt"] and list(outside.iterdir()) == []
    assert not (repo / "sub").is_symlink() and (repo / "sub" / "f.txt").read_text() == "inside\n"


def test_a_restore_never_writes_through_a_link_no_checkpoint_covers(repo, tmp_path):
    store, with_folder, outside = _folder_become_a_link(repo, tmp_path)
    with (repo / ".gitignore").open("a") as handle:
        handle.write("sub\n")
    done = store.restore(store.snapshot(), with_folder)
    assert done.files == [".gitignore"] and "sub/f.txt" in done.skipped
    assert list(outside.iterdir()) == [] and (repo / "sub").is_symlink()


def test_new_files_restore_deletes_and_emptied_folders_go(repo, tmp_path):
    store = GitStore(repo, tmp_path / "agent").open()
    before = store.snapshot()
    (repo / "deep" / "er").mkdir(parents=True)
    (repo / "deep" / "er" / "x.txt").write_text("x")
    (repo / "deep" / "er" / "y.log").write_text("ignored: keeps its folder")
    (repo / "gen").mkdir()
    (repo / "gen" / "z.txt").write_text("z")
    after = store.snapshot()
    done = store.restore(after, before)
    assert done.files == ["deep/er/x.txt", "gen/z.txt"]
    assert not (repo / "gen").exists()
    assert (repo / "deep" / "er" / "y.log").exists()


def test_git_runs_against_the_private_store_even_when_the_environment_names_the_user_repository(
        repo, tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(repo / ".git" / "index"))
    before = git_dir_hash(repo)
    store = GitStore(repo, tmp_path / "agent").open()
    first = store.snapshot()
    (repo / "a.txt").write_text("changed")
    store.restore(store.snapshot(), first)
    assert git_dir_hash(repo) == before
    assert store.git_dir.is_relative_to(tmp_path / "agent")


def test_the_agent_dir_inside_the_work_tree_is_never_snapshotted(repo):
    store = GitStore(repo, repo / ".pi-agent").open()
    assert not [p for p in tree_files(store, store.snapshot()) if p.startswith(".pi-agent")]


def test_a_nested_repository_is_left_alone(repo, tmp_path):
    nested = repo / "vendor"
    nested.mkdir()
    (nested / "lib.txt").write_text("theirs")
    subprocess.run(["git", "init", "-q"], cwd=nested, check=True)
    store = GitStore(repo, tmp_path / "agent").open()
    assert not [p for p in tree_files(store, store.snapshot()) if p.startswith("vendor")]


def test_the_work_tree_is_found_by_looking_for_dot_git_only(repo, tmp_path):
    assert find_work_tree(repo / "src") == repo.resolve()
    assert find_work_tree(tmp_path) is None
    assert user_git(repo, "rev-parse", "--show-toplevel").strip() == str(repo.resolve())
