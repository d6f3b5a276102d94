"""A scripted model works in a temporary git repository over several prompts (edit,
write, and bash's rm, sed -i, mv and generated files); every point of the session then
restores to exactly its workspace, an undo brings the latest state back, and the user's
repository is never touched."""

from __future__ import annotations

import json
import os

import pytest

from pi_plugins.sdk import create_harness
from pi_core.session import Session
from pi_core.app.settings import Settings
from pi_plugins import app_messages, checkpoints, tools
from pi_core.testing import Reply, ScriptedProvider, scripted_model
from support.agents import run
from support.sessions import pi_probe

from support.workspaces import git_dir_hash, user_git, workspace_hash

pytestmark = pytest.mark.requires("git")


def bash(command):
    return ("bash", {"command": command})


SCRIPT = [
    # prompt 1: edit, then write and rm in one batch
    Reply(tool_calls=[("edit", {"path": "a.txt", "edits": [{"oldText": "beta", "newText": "BETA"}]})]),
    Reply(tool_calls=[("write", {"path": "docs/new.md", "content": "# new\n"}), bash("rm b.txt")]),
    Reply(text="first done"),
    # prompt 2: sed -i, mv, a generated file, an ignored log, a file over the size limit
    Reply(tool_calls=[bash("sed -i 's/x marks/y marks/' notes.md && mv src/gen.py src/moved.py")]),
    Reply(tool_calls=[bash("mkdir -p out && seq 1 50 > out/numbers.txt && echo noise > build.log"
                           " && head -c 1100000 /dev/zero > big.bin && chmod -x run.sh")]),
    Reply(tool_calls=[bash("cat notes.md")]),  # reads only: no checkpoint
    Reply(text="second done"),
    # prompt 3: undo some of it by hand
    Reply(tool_calls=[bash("rm -r out && printf 'alpha\\n' > a.txt && ln -s a.txt link")]),
    Reply(text="third done"),
]


def scenario(repo, tmp_path, script=SCRIPT, prompts=("one", "two", "three"), settings=None,
             tool_execution="parallel"):
    """Run the prompts; return the harness and the workspace hash at each entry but the
    opening model and thinking-level entries (user and assistant messages, tool results,
    checkpoints)."""
    states: dict[str, str] = {}

    async def go():
        harness = await create_harness(
            ScriptedProvider(list(script)), app_messages, tools, checkpoints, model=scripted_model(),
            cwd=str(repo), session=Session.create(repo, tmp_path / "sessions"),
            settings=Settings(settings or {}))

        def settle(event):
            # Whenever no tool runs, the entries stored since the last look hold the
            # workspace as it is now (a parallel batch stores its tool results after all
            # its tools ran; a sequential one each before the next tool starts).
            if event.type in ("agent_start", "turn_end", "agent_end", "tool_execution_start") or (
                    event.type == "message_end" and event.message.role in ("user", "assistant")):
                now = workspace_hash(repo)
                for entry in reversed(harness.session.path()):
                    if entry.id in states:
                        break
                    states[entry.id] = now

        harness.agent.tool_execution = tool_execution
        harness.subscribe(settle)
        for text in prompts:
            await harness.prompt(text)
        return harness

    return run(go()), states


def test_every_point_restores_to_exactly_its_workspace_and_an_undo_brings_back_the_latest(repo, tmp_path):
    git_before = git_dir_hash(repo)
    status_before = user_git(repo, "status", "--porcelain=v1", "-uall")
    harness, states = scenario(repo, tmp_path)
    assert harness.plugins.errors == type(harness.plugins.errors)()
    latest = workspace_hash(repo)
    assert git_dir_hash(repo) == git_before  # not even git status ran against it

    made = run(harness.checkpoints())
    by_reason = [(c.reason, sorted(c.files)) for c in made]
    assert by_reason == [
        ("prompt", []),
        ("tools", ["a.txt"]),
        ("tools", ["b.txt", "docs/new.md"]),
        ("tools", ["notes.md", "src/gen.py", "src/moved.py"]),
        ("tools", ["out/numbers.txt", "run.sh"]),
        ("tools", ["a.txt", "link", "out/numbers.txt"]),
    ]
    assert len(set(states.values())) >= 6

    entry_ids = [e.id for e in harness.session.entries
                 if e.type not in ("model_change", "thinking_level_change")]  # before any
    assert set(entry_ids) <= set(states)
    first_undo = None
    for entry_id in reversed(entry_ids):
        result = run(harness.restore_checkpoint(entry_id))
        first_undo = first_undo or result.undo_entry_id
        assert workspace_hash(repo) == states[entry_id], entry_id
        assert git_dir_hash(repo) == git_before
    assert (repo / "keep.log").read_text() == "ignored, never touched\n"
    assert (repo / "build.log").read_text() == "noise\n"  # ignored: left as it is
    assert (repo / "big.bin").stat().st_size == 1100000  # over the limit: left as it is
    assert (repo / "b.txt").read_text() == "to be removed\n"
    assert os.access(repo / "run.sh", os.X_OK)

    undo = run(harness.restore_checkpoint(first_undo))
    assert workspace_hash(repo) == latest
    assert "a.txt" in undo.files and not (repo / "b.txt").exists()
    assert os.readlink(repo / "link") == "a.txt" and not (repo / "out").exists()

    # Back at the start, the user's own view is what it was (big.bin, which no checkpoint
    # covers, stays where the model left it).
    run(harness.restore_checkpoint(made[0].entry_id))
    (repo / "big.bin").unlink()
    assert user_git(repo, "status", "--porcelain=v1", "-uall") == status_before
    assert git_dir_hash(repo) == git_before


def test_the_session_lists_restores_as_checkpoints_and_still_opens_in_pi(repo, tmp_path):
    harness, _ = scenario(repo, tmp_path, prompts=("one",))
    made = run(harness.checkpoints())
    result = run(harness.restore_checkpoint(made[0].entry_id))
    after = run(harness.checkpoints())
    assert after[-1].entry_id == result.undo_entry_id and after[-1].reason == "restore"
    assert sorted(result.files) == ["a.txt", "b.txt", "docs/new.md"]
    lines = [json.loads(line) for line in harness.session.file.read_text().splitlines()]
    custom = [line for line in lines if line["type"] == "custom"]
    assert all(line["customType"] == "checkpoint" and len(line["data"]["snapshot"]) == 40
               for line in custom) and len(custom) == len(after)


@pytest.mark.requires("pi")
@pytest.mark.process
def test_a_session_with_checkpoints_opens_in_the_real_pi(repo, tmp_path):
    harness, _ = scenario(repo, tmp_path, prompts=("one",))
    run(harness.restore_checkpoint(run(harness.checkpoints())[0].entry_id))
    file = str(harness.session.file)
    ours = [e.id for e in harness.session.entries]
    run(harness.close())
    seen = pi_probe("context", file)
    assert seen["entryIds"] == ours
    assert seen["leafId"] == ours[-1]
    texts = [m["content"] if isinstance(m["content"], str) else m["content"][0].get("text")
             for m in seen["context"]["messages"] if m["role"] == "user"]
    assert texts == ["one"]  # checkpoints never reach the model
    assert [m["role"] for m in seen["context"]["messages"]][-1] == "assistant"


def test_restoring_to_an_entry_without_a_checkpoint_before_it_is_a_clear_error(repo, tmp_path):
    harness, _ = scenario(repo, tmp_path, prompts=("one",))
    first = harness.session.entries[0]  # model_change, before any checkpoint
    with pytest.raises(Exception, match="no checkpoint at or before"):
        run(harness.restore_checkpoint(first.id))
    with pytest.raises(Exception, match="no entry"):
        run(harness.restore_checkpoint("nothere"))


def test_checkpoints_are_off_outside_a_git_work_tree_unless_the_setting_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    plain = tmp_path / "plain"
    plain.mkdir()
    script = [Reply(tool_calls=[bash("echo hi > made.txt")]), Reply(text="ok")]
    harness, _ = scenario(plain, tmp_path, script=script, prompts=("one",))
    with pytest.raises(LookupError, match="outside a git work tree"):
        run(harness.checkpoints())
    assert not (tmp_path / "agent" / "checkpoints").exists()

    (plain / "made.txt").unlink()
    harness, _ = scenario(plain, tmp_path, script=script, prompts=("one",),
                          settings={"checkpoints": {"enabled": True}})
    made = run(harness.checkpoints())
    assert [c.files for c in made] == [[], ["made.txt"]]
    run(harness.restore_checkpoint(made[0].entry_id))
    assert not (plain / "made.txt").exists()


def test_a_repository_can_turn_checkpoints_off(repo, tmp_path):
    harness, _ = scenario(repo, tmp_path, prompts=("one",), settings={"checkpoints": {"enabled": False}})
    with pytest.raises(LookupError, match="checkpoints.enabled is false"):
        run(harness.checkpoints())
    assert not any(e.type == "custom" for e in harness.session.entries)


def test_a_store_that_went_missing_starts_afresh_instead_of_failing_every_turn(repo, tmp_path):
    import shutil

    script = [Reply(tool_calls=[bash("echo 1 > one.txt")]), Reply(text="ok"),
              Reply(tool_calls=[bash("echo 2 > two.txt")]), Reply(text="ok")]
    harness, _ = scenario(repo, tmp_path, script=script, prompts=("one",))
    shutil.rmtree(tmp_path / "agent" / "checkpoints")
    run(harness.prompt("two"))
    assert list(harness.plugins.errors) == []
    made = run(harness.checkpoints())
    # The new store's first snapshot is the branch's last one again: no new checkpoint.
    assert [c.files for c in made] == [[], ["one.txt"], ["two.txt"]]
    run(harness.restore_checkpoint(made[1].entry_id))
    assert (repo / "one.txt").exists() and not (repo / "two.txt").exists()
    with pytest.raises(Exception, match="missing from"):
        run(harness.restore_checkpoint(made[0].entry_id))


def test_the_size_limit_comes_from_the_settings(repo, tmp_path):
    script = [Reply(tool_calls=[bash("echo tiny > small.txt && seq 1 100 > long.txt")]), Reply(text="ok")]
    harness, _ = scenario(repo, tmp_path, script=script, prompts=("one",),
                          settings={"checkpoints": {"maxFileBytes": 64}})
    made = run(harness.checkpoints())
    assert made[-1].files == ["small.txt"]
    result = run(harness.restore_checkpoint(made[0].entry_id))
    assert result.files == ["small.txt"] and (repo / "long.txt").exists()


def test_without_git_checkpoints_say_so(repo, tmp_path, monkeypatch):
    from pi_core.context import Context
    from pi_core.plugins import Plugins

    ctx = Context(cwd=str(repo), plugins=Plugins(), settings=Settings({}))
    assert checkpoints.enabled(ctx) == (True, "")
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs-here"))
    assert checkpoints.enabled(ctx) == (False, "checkpoints need git, which is not installed")


def test_a_batch_run_one_tool_after_another_restores_to_each_tool_result(repo, tmp_path):
    script = [Reply(tool_calls=[bash("echo 1 > one.txt"), bash("cat one.txt"), ("read", {"path": "one.txt"}),
                                ("write", {"path": "two.txt", "content": "2"}), bash("rm one.txt")]),
              Reply(text="ok")]
    harness, states = scenario(repo, tmp_path, script=script, prompts=("one",),
                               tool_execution="sequential")
    results = [e.id for e in harness.session.entries
               if e.type == "message" and e.message.role == "toolResult"]
    assert len(results) == 5 and len({states[r] for r in results}) == 3
    for entry_id in results + [results[0]]:
        run(harness.restore_checkpoint(entry_id))
        assert workspace_hash(repo) == states[entry_id]
