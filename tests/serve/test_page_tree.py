"""`/tree` in real Chromium at 1280 and 375 px: the session's entries as pi's /tree
shows them, a branch indented under the entry it leaves, the current branch marked."""

from __future__ import annotations

import pytest
from support.serve_page import show_sessions
from support.sessions import assistant, user

pytestmark = [pytest.mark.requires("chromium"), pytest.mark.process]


def _branched_session(served) -> str:
    """A session file with two answers to the first prompt: the second is current."""
    from pi_core.session import Session

    host = served.serving.sessions
    session = Session.create(served.cwd, host.folder_for(served.cwd))
    first = session.append_message(user("plan the trip"))
    session.append_message(assistant("Go by train."))
    session.append_message(user("what about the car?"))
    session.append_message(assistant("The car is slower."))
    session.branch(first.id)
    session.append_message(assistant("Fly, it is far."))
    session.save()
    session_id = session.id
    session.close()
    return session_id


def test_the_tree_shows_every_branch_and_marks_the_current_one(pages, served, width):
    from playwright.sync_api import expect

    session_id = _branched_session(served)
    page = pages.open(width)
    show_sessions(page)
    page.locator(f'#sessions li[data-id="{session_id}"]').click()
    expect(page.locator('[data-testid="message"][data-role="assistant"]')).to_have_text("Fly, it is far.")
    box = page.get_by_test_id("prompt")
    box.fill("/tr")
    expect(page.get_by_test_id("completion")).to_contain_text("/tree")
    box.press("Enter")  # completes
    box.press("Enter")  # runs
    entries = page.locator(".tree li.tree-user, .tree li.tree-assistant")  # notes (a model change) aside
    expect(entries.locator(".tree-text")).to_have_text(
        ["plan the trip", "Go by train.", "what about the car?", "The car is slower.", "Fly, it is far."])
    expect(page.locator(".tree li.leaf")).to_have_count(1)  # the leaf: opening it on a model noted that
    expect(page.locator(".tree li.on-path:not(.tree-note) .tree-text")).to_have_text(["plan the trip", "Fly, it is far."])
    indents = [entries.nth(i).evaluate("(li) => parseInt(li.style.paddingLeft)") for i in range(5)]
    assert indents[0] < indents[1] == indents[4]  # both answers branch from the prompt
    pages.shoot(page, f"tree-{width}")
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("tree-view")).to_be_hidden()
