"""The page's /tree beyond moving, in real Chromium at 1280 and 375 px: pi's filters
(by click and by pi's keys), labels set and cleared as pi's /tree writes them (every
client sees them), and the chat's question whether to restore the files too."""

from __future__ import annotations

import json

import pytest
from support.serve_page import new_session, send, show_sessions
from support.sessions import assistant, tool_result, user

pytestmark = [pytest.mark.requires("chromium"), pytest.mark.process]


def _session_with_tools(served) -> tuple[str, str]:
    """(id, file): a prompt answered after a bash call, then a second prompt and answer;
    the first answer labelled "answer"."""
    from pi_core.session import Session

    session = Session.create(served.cwd, served.serving.sessions.folder_for(served.cwd))
    session.append_message(user("list the files"))
    session.append_message(assistant(calls=[("c1", "bash")]))
    session.append_message(tool_result("c1", "a.txt b.txt"))
    answer = session.append_message(assistant("Two files."))
    session.append_message(user("thanks"))
    session.append_message(assistant("You are welcome."))
    session.append_label(answer.id, "answer")
    session.save()
    found = (session.id, str(session.file))
    session.close()
    return found


def _open(pages, served, session_id, width):
    from playwright.sync_api import expect

    page = pages.open(width)
    show_sessions(page)
    page.locator(f'#sessions li[data-id="{session_id}"]').click()
    expect(page.locator('[data-testid="message"][data-role="assistant"]').last).to_have_text("You are welcome.")
    page.get_by_test_id("open-tree").click()
    expect(page.get_by_test_id("tree-view")).to_be_visible()
    return page


def _listed(page) -> list[str]:
    return page.locator(".tree li .tree-text").all_inner_texts()


def test_the_trees_filters_switch_by_click_and_by_pis_keys(pages, served, pi, width):
    """pi's five filters: the one treeFilterMode names first; a click on a filter, or
    pi's letter with Alt (or Ctrl where the browser lets it: d, t, u, l, a; o and Shift+O
    cycle; a bare letter searches) lists what the chat's would."""
    from playwright.sync_api import expect

    (pi.agent_dir / "settings.json").write_text(json.dumps({"treeFilterMode": "no-tools"}))
    served.serving.sessions.env.reload_settings()  # as a save from the settings view does
    session_id, _ = _session_with_tools(served)
    page = _open(pages, served, session_id, width)
    tree = page.get_by_test_id("tree")
    pressed = page.locator('[data-testid="tree-filter"][aria-pressed="true"]')
    expect(tree).to_have_attribute("data-filter", "no-tools")
    expect(pressed).to_have_text("no-tools")
    assert _listed(page) == ["list the files", "Two files.", "thanks", "You are welcome."]
    page.keyboard.press("Alt+d")  # default: the tool's result too (the bare tool call stands behind it)
    expect(tree).to_have_attribute("data-filter", "default")
    assert _listed(page) == ["list the files", "bash: a.txt b.txt", "Two files.", "thanks", "You are welcome."]
    page.locator('[data-testid="tree-filter"][data-mode="user-only"]').click()
    expect(pressed).to_have_text("user-only")
    expect(page.locator(".tree li .tree-text")).to_have_text(["list the files", "thanks"])
    expect(page.locator(".tree li:focus")).to_have_count(1)  # the keys go on working
    page.keyboard.press("Alt+l")
    expect(page.locator(".tree li .tree-text")).to_have_text(["Two files."])
    expect(page.locator(".tree li .tree-label")).to_have_text(["answer"])
    page.keyboard.press("Alt+l")  # the same letter again: back to default, as in pi
    expect(tree).to_have_attribute("data-filter", "default")
    page.keyboard.press("Alt+a")
    expect(tree).to_have_attribute("data-filter", "all")
    expect(page.locator(".tree li .tree-text", has_text="[label: answer]")).to_have_count(1)
    expect(page.locator(".tree li .tree-text", has_text="[model: ")).not_to_have_count(0)  # opening noted it
    # as the chat's: an answer of tool calls alone is never listed, its tool rows stand for it
    expect(page.locator(".tree li.tree-assistant .tree-text", has_text="→ bash")).to_have_count(0)
    pages.shoot(page, f"tree-filter-all-{width}")
    page.keyboard.press("Alt+o")  # all -> default (cycling wraps)
    expect(tree).to_have_attribute("data-filter", "default")
    page.keyboard.press("Alt+Shift+O")
    expect(tree).to_have_attribute("data-filter", "all")
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("tree-view")).to_be_hidden()


def test_a_label_is_set_and_cleared_from_the_tree_and_every_client_sees_it(pages, served, width):
    """Shift+L (pi's key) or an entry's label button asks for the label; the answer is a
    label entry in the session file, as pi writes it; an empty one clears it. Another
    page with the tree open, and a socket client, see it at once."""
    from playwright.sync_api import expect

    session_id, file = _session_with_tools(served)
    page = _open(pages, served, session_id, width)
    watcher = _open(pages, served, session_id, width)
    other = served.socket(session_id)
    row = page.locator(".tree li", has_text="Two files.")
    row.focus()
    page.keyboard.press("Shift+L")
    field = page.get_by_test_id("dialog-input")
    expect(field).to_have_value("answer")
    field.fill("")
    field.press("Enter")
    expect(page.locator(".tree li", has_text="Two files.").locator(".tree-label")).to_have_count(0)
    expect(page.locator(".tree li", has_text="Two files.")).to_be_focused()
    other.event("label_changed", label=None)

    page.locator(".tree li", has_text="thanks").get_by_test_id("tree-label-edit").click()
    field.fill("  the thanks  ")
    page.get_by_test_id("dialog-ok").click()
    expect(page.locator(".tree li", has_text="thanks").locator(".tree-label")).to_have_text("the thanks")
    expect(watcher.locator(".tree li", has_text="thanks").locator(".tree-label")).to_have_text("the thanks")
    expect(watcher.locator(".tree li", has_text="Two files.").locator(".tree-label")).to_have_count(0)
    pages.shoot(page, f"tree-labelled-{width}")
    labels = [json.loads(line) for line in open(file, encoding="utf-8") if '"type":"label"' in line.replace(" ", "")]
    thanks = next(node for node in _walk(other.ok("get_tree")["tree"]) if node.get("label"))
    assert thanks["entry"]["message"]["content"][0]["text"] == "thanks"
    assert [entry.get("label") for entry in labels] == ["answer", None, "the thanks"]
    assert labels[-1]["targetId"] == thanks["entry"]["id"]
    refused = other.request("set_label", entryId="nothere", label="x")
    assert refused["success"] is False and "Entry not found" in refused["error"]
    # the conversation is as it was: a label moves no message
    expect(page.locator('[data-testid="message"][data-role="assistant"]').last).to_have_text("You are welcome.")


def _walk(roots):
    stack = list(roots)
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node["children"])


@pytest.mark.requires("git")
def test_moving_in_the_tree_asks_whether_to_restore_the_files_as_the_chat_does(pages, served, server, pi, width):
    """Where checkpoints are on and files changed since the entry chosen: the chat's
    question with the files named; "Restore" puts them back, backing out moves nothing."""
    from playwright.sync_api import expect
    from support.llm_server import Reply
    from support.workspaces import user_git

    (pi.cwd / "a.txt").write_text("original\n")
    user_git(pi.cwd, "init", "-q")
    server.push(Reply(tool_calls=[("bash", {"command": "echo changed > a.txt && echo new > b.txt"})]),
                Reply(text="Done."))
    page = pages.open(width)
    new_session(page)
    send(page, "make it")
    expect(page.locator('[data-testid="message"][data-role="assistant"]').last).to_contain_text("Done.")
    expect(page.locator("#status")).to_have_text("ready")
    assert (pi.cwd / "b.txt").exists()

    def ask_about_the_first_prompt():
        page.get_by_test_id("open-tree").click()
        page.locator(".tree li", has_text="make it").click()
        page.get_by_test_id("dialog").get_by_text("No summary", exact=True).click()
        dialog = page.get_by_test_id("dialog")
        expect(dialog.locator("h2")).to_have_text("Restore the files to that point too?")
        expect(dialog).to_contain_text("changed since then: a.txt, b.txt")
        expect(dialog.get_by_test_id("dialog-option")).to_have_text(["Keep the files as they are", "Restore 2 files"])
        return dialog

    ask_about_the_first_prompt()
    page.keyboard.press("Escape")  # backed out: the tree again, nothing moved
    expect(page.get_by_test_id("tree-view")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator('[data-testid="message"][data-role="assistant"]').last).to_contain_text("Done.")
    assert (pi.cwd / "a.txt").read_text() == "changed\n"

    dialog = ask_about_the_first_prompt()
    pages.shoot(page, f"tree-restore-question-{width}")
    dialog.get_by_text("Restore 2 files").click()
    expect(page.locator(".toast", has_text="Restored 2 files")).to_contain_text("a.txt, b.txt")
    expect(page.get_by_test_id("prompt")).to_have_value("make it")
    expect(page.locator('[data-testid="message"]')).to_have_count(0)
    assert (pi.cwd / "a.txt").read_text() == "original\n" and not (pi.cwd / "b.txt").exists()
