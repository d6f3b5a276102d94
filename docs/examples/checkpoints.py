"""Checkpoints: the files go back with the session tree.

A scripted model changes files in a fresh git repository (with edit and through bash);
the SDK lists the checkpoints and restores the workspace to the first one, then undoes
that. A plugin's ``workspace_checkpoints`` hook decides where checkpoints are kept: this
one turns them off for a folder named ``scratch`` and leaves the built-in plugin's answer
everywhere else.

Run it: python docs/examples/checkpoints.py   (needs git; runs offline)
"""

import asyncio
import os
import subprocess
import tempfile
from pathlib import Path

from pi_core import create_harness, hookimpl
from pi_core.testing import Reply, ScriptedProvider, scripted_model
from pi_plugins import checkpoints, tools


class NoCheckpointsInScratch:
    @hookimpl
    def workspace_checkpoints(self, ctx):
        if Path(ctx.cwd).name == "scratch":
            return "no checkpoints in scratch folders"  # why there are none
        return None  # no opinion: the built-in checkpointer answers


async def main(repo: Path) -> None:
    provider = ScriptedProvider([
        Reply(tool_calls=[("edit", {"path": "app.py", "edits": [{"oldText": "1", "newText": "2"}]})]),
        Reply(tool_calls=[("bash", {"command": "rm notes.txt && echo built > out.txt"})]),
        Reply(text="Done."),
    ])
    harness = await create_harness(provider, tools, checkpoints, NoCheckpointsInScratch(),
                                   model=scripted_model(), cwd=str(repo))
    await harness.prompt("Bump the version and tidy up")
    made = await harness.checkpoints()
    for checkpoint in made:
        print(f"checkpoint {checkpoint.reason}: {checkpoint.files}")
    result = await harness.restore_checkpoint(made[0].entry_id)
    print("restored:", result.files, "->", sorted(p.name for p in repo.iterdir() if p.name != ".git"))
    await harness.restore_checkpoint(result.undo_entry_id)
    print("undone:", sorted(p.name for p in repo.iterdir() if p.name != ".git"))

    scratch = repo / "scratch"
    scratch.mkdir()
    elsewhere = await create_harness(ScriptedProvider([]), checkpoints, NoCheckpointsInScratch(),
                                     model=scripted_model(), cwd=str(scratch))
    try:
        await elsewhere.checkpoints()
    except LookupError as exc:
        print("in scratch:", exc)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["PI_CODING_AGENT_DIR"] = str(Path(tmp) / "agent")  # keep the store here
        repo = Path(tmp) / "repo"
        repo.mkdir()
        (repo / "app.py").write_text("VERSION = 1\n")
        (repo / "notes.txt").write_text("todo\n")
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        asyncio.run(main(repo))
