"""get_checkpoints and restore_checkpoint: the workspace at any point, over RPC."""

import pytest

from support.llm_server import Reply
from support.workspaces import git_dir_hash, user_git, workspace_hash

pytestmark = [pytest.mark.requires("git"), pytest.mark.process]


def test_a_restore_over_rpc_brings_the_files_back_and_is_itself_undoable(pi, server, start_rpc):
    repo = pi.cwd
    (repo / "a.txt").write_text("one\n")
    (repo / "gone.txt").write_text("soon deleted\n")
    user_git(repo, "init", "-q")
    user_git(repo, "add", "-A")
    git_before = git_dir_hash(repo)
    start = workspace_hash(repo)
    rpc = start_rpc()
    server.push(
        Reply(tool_calls=[("bash", {"command": "sed -i 's/one/two/' a.txt && rm gone.txt && echo new > new.txt"})]),
        Reply(text="changed"))
    rpc.ok("prompt", message="change things")
    rpc.event("agent_end")
    changed = workspace_hash(repo)

    checkpoints = rpc.ok("get_checkpoints")
    assert [sorted(c) for c in checkpoints] == [["entryId", "files", "timestamp"]] * 2
    assert checkpoints[0]["files"] == [] and sorted(checkpoints[1]["files"]) == ["a.txt", "gone.txt", "new.txt"]

    restored = rpc.ok("restore_checkpoint", entryId=checkpoints[0]["entryId"])
    assert restored["files"] == ["a.txt", "gone.txt", "new.txt"]
    assert workspace_hash(repo) == start and (repo / "a.txt").read_text() == "one\n"
    listed = rpc.ok("get_checkpoints")
    assert listed[-1]["entryId"] == restored["undoEntryId"] and len(listed) == 3

    undone = rpc.ok("restore_checkpoint", entryId=restored["undoEntryId"])
    assert undone["files"] == ["a.txt", "gone.txt", "new.txt"]
    assert workspace_hash(repo) == changed
    assert git_dir_hash(repo) == git_before

    failed = rpc.request("restore_checkpoint", entryId="nothere")
    assert failed["success"] is False and "no entry" in failed["error"]
    missing = rpc.request("restore_checkpoint")
    assert missing["success"] is False and "entryId" in missing["error"]


def test_get_checkpoints_outside_a_repository_says_why_there_are_none(rpc):
    response = rpc.request("get_checkpoints")
    assert response["success"] is False and "outside a git work tree" in response["error"]



def test_the_command_list_stays_the_real_pis(rpc):
    """/rewind belongs to the chat; an RPC client restores with restore_checkpoint."""
    assert "rewind" not in [c["name"] for c in rpc.ok("get_commands")["commands"]]
