"""In the chat: /tree and /fork offer to restore the files too; /rewind lists the
checkpoints and restores one (here: undoing the restore /tree made). /rewind is a
built-in command of the chat, so an RPC client's command list stays the real pi's."""

import pytest

from support.llm_server import Reply
from support.workspaces import user_git

pytestmark = [pytest.mark.requires("git"), pytest.mark.process]

CHANGE = ("bash", {"command": "echo changed > a.txt && echo new > b.txt"})


def _work(pi_tui, server):
    server.push(Reply(tool_calls=[CHANGE]), Reply(text="Done."))
    term = pi_tui(files={"a.txt": "original\n"})
    user_git(term.cwd, "init", "-q")
    term.submit("make it")
    term.wait_for("Done.")
    term.wait_idle()
    assert (term.cwd / "b.txt").exists()
    return term


def _tree_back_to_the_first_prompt(term) -> str:
    """/tree to the first prompt, no branch summary: the screen with the restore offer."""
    term.submit("/tree")
    term.wait_for("Session tree")
    term.type("make it")
    term.wait_for("→ • user: make it")
    term.press("Enter")
    term.wait_for("Summarize the branch you leave?")
    term.press("Enter")
    return term.wait_for("Restore the files to that point too?")


def test_tree_offers_to_restore_the_files_and_rewind_undoes_it(pi_tui, server):
    term = _work(pi_tui, server)
    offer = _tree_back_to_the_first_prompt(term)
    assert "changed since then: a.txt, b.txt" in offer
    term.press("Down")
    term.wait_for("→ Restore 2 files")
    term.press("Enter")
    term.wait_drawn("Restored 2 files")
    assert (term.cwd / "a.txt").read_text() == "original\n" and not (term.cwd / "b.txt").exists()
    assert term.editor(term.screen()) == "make it"

    term.press("C-c")
    term.wait_drawn(lambda s: term.editor(s) == "")
    term.submit("/rewind")
    picker = term.wait_for("Restore the files to which checkpoint?")
    rows = [line for line in picker.split("Restore the files to which checkpoint?")[1].splitlines()
            if line.rstrip().endswith("]")]
    # The latest first: the restore made at the start of the session (before turn 1).
    assert "→ start · " in rows[0] and "a.txt, b.txt · before a restore" in rows[0]
    assert any("turn 1 · " in row and " · a.txt, b.txt [" in row for row in rows[1:])
    assert any("turn 1 · " in row and "before the prompt" in row for row in rows[1:])
    term.press("Enter")  # the latest: the state the restore replaced
    term.wait_drawn(lambda s: s.count("Restored 2 files: a.txt, b.txt") == 2)  # the /tree one and this
    assert (term.cwd / "a.txt").read_text() == "changed\n" and (term.cwd / "b.txt").read_text() == "new\n"


def test_fork_offers_to_restore_the_files_in_the_new_session(pi_tui, server):
    term = _work(pi_tui, server)
    term.submit("/fork")
    term.wait_for("Fork from which message?")
    term.press("Enter")
    term.wait_for("Restore the files to that point too?")
    term.press("Down", "Enter")
    term.wait_drawn(lambda s: "Forked to a new session" in s and "Restored 2 files" in s
                    and term.editor(s) == "make it")
    assert (term.cwd / "a.txt").read_text() == "original\n" and not (term.cwd / "b.txt").exists()


def test_tree_can_leave_the_files_as_they_are(pi_tui, server):
    term = _work(pi_tui, server)
    _tree_back_to_the_first_prompt(term)
    term.press("Enter")  # keep them
    term.wait_drawn("Navigated to the selected point")
    assert (term.cwd / "a.txt").read_text() == "changed\n" and (term.cwd / "b.txt").exists()
