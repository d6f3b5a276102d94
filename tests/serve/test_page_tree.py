"""`/tree` in real Chromium at 1280 and 375 px: the session's entries as pi's /tree
shows them, a branch indented under the entry it leaves, the current branch marked."""

from __future__ import annotations

import pytest
from support.serve_page import open_branched

pytestmark = [pytest.mark.requires("chromium"), pytest.mark.process]


def test_the_tree_shows_every_branch_and_marks_the_current_one(pages, served, width):
    from playwright.sync_api import expect

    _, page = open_branched(pages, served, width)
    box = page.get_by_test_id("prompt")
    box.fill("/tr")
    expect(page.get_by_test_id("completion")).to_contain_text("/tree")
    box.press("Enter")  # completes
    box.press("Enter")  # runs
    entries = page.locator(".tree li.tree-user, .tree li.tree-assistant")  # notes (a model change) aside
    expect(entries.locator(".tree-text")).to_have_text(
        ["plan the trip", "Fly, it is far.", "Go by train.", "what about the car?", "The car is slower."])  # current first
    expect(page.locator(".tree li", has_text="Go by train.").locator(".tree-label")).to_have_text("by rail")
    expect(page.locator(".tree li.leaf")).to_have_count(1)  # the leaf: opening it on a model noted that
    expect(page.locator(".tree li.on-path:not(.tree-note) .tree-text")).to_have_text(["plan the trip", "Fly, it is far."])
    indents = [entries.nth(i).evaluate("(li) => parseInt(li.style.paddingLeft)") for i in range(5)]
    assert indents[0] < indents[1] == indents[2]  # both answers branch from the prompt
    pages.shoot(page, f"tree-{width}")
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("tree-view")).to_be_hidden()


def _open_tree_with_the_keyboard(page):
    page.get_by_test_id("open-tree").focus()
    page.keyboard.press("Enter")


def test_choosing_an_entry_in_the_tree_moves_there_and_the_conversation_follows(pages, served, width):
    """Keyboard alone: the Tree button, ↑/↓ to an entry, Enter, "No summary": the session
    continues from that entry, on the page and for every other client of the session."""
    from playwright.sync_api import expect

    session_id, page = open_branched(pages, served, width)
    answers = page.locator('[data-testid="message"][data-role="assistant"]')
    other = served.socket(session_id)
    _open_tree_with_the_keyboard(page)
    expect(page.locator(".tree li.leaf")).to_be_focused()
    page.keyboard.press("Home")
    for _ in range(4):  # the current branch is listed first
        page.keyboard.press("ArrowDown")
    expect(page.locator(".tree li:focus .tree-text")).to_have_text("The car is slower.")
    page.keyboard.press("Enter")
    dialog = page.get_by_test_id("dialog")
    expect(dialog.locator("h2")).to_have_text("Summarize the branch you leave?")
    expect(dialog.get_by_test_id("dialog-option")).to_have_text(
        ["No summary", "Summarize", "Summarize with custom prompt"])
    expect(dialog.get_by_test_id("dialog-option").first).to_be_focused()
    page.keyboard.press("Enter")  # No summary
    expect(answers).to_have_text(["Go by train.", "The car is slower."])
    expect(page.get_by_test_id("tree-view")).to_be_hidden()
    expect(page.get_by_test_id("prompt")).to_be_focused()
    other.event("tree_navigated")
    texts = [m["content"][0]["text"] for m in other.ok("get_messages")["messages"]]
    assert texts == ["plan the trip", "Go by train.", "what about the car?", "The car is slower."]
    pages.shoot(page, f"tree-navigated-{width}")


def test_choosing_a_prompt_in_the_tree_offers_it_again_and_a_summary_keeps_the_branch_left(pages, served, server, width):
    """As pi's /tree: a user message goes to its parent with its text back in the prompt
    box; "Summarize" has the model summarize the branch left behind, shown in its place."""
    from playwright.sync_api import expect
    from support.llm_server import Reply

    session_id, page = open_branched(pages, served, width)
    server.push(Reply(text="They weighed flying against the train."))
    page.get_by_test_id("prompt").fill("/tre")
    expect(page.get_by_test_id("completion")).to_contain_text("/tree")
    page.get_by_test_id("prompt").press("Enter")  # completes
    page.get_by_test_id("prompt").press("Enter")  # runs
    page.locator(".tree li", has_text="what about the car?").click()
    page.get_by_test_id("dialog").get_by_text("Summarize", exact=True).click()
    expect(page.get_by_test_id("prompt")).to_have_value("what about the car?")
    expect(page.locator('[data-testid="message"]').last).to_contain_text("They weighed flying against the train.")
    expect(page.locator('[data-testid="message"][data-role="assistant"]')).to_have_text(["Go by train."])
    session = served.socket(session_id)
    tree = session.ok("get_tree")
    leaf = next(e for e in session.ok("get_entries")["entries"] if e["id"] == tree["leafId"])
    assert leaf["type"] == "branch_summary"
    assert leaf["summary"].endswith("They weighed flying against the train.")


def test_backing_out_of_the_summary_question_shows_the_tree_again_and_moves_nothing(pages, served, width):
    from playwright.sync_api import expect

    _, page = open_branched(pages, served, width)
    page.get_by_test_id("open-tree").click()
    page.locator(".tree li", has_text="Go by train.").click()
    expect(page.get_by_test_id("dialog")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("tree-view")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("tree-view")).to_be_hidden()
    expect(page.locator('[data-testid="message"][data-role="assistant"]')).to_have_text("Fly, it is far.")


def test_a_branch_summary_under_way_is_cancelled_with_escape_and_nothing_moves(pages, served, server, width):
    import threading

    from playwright.sync_api import expect
    from support.llm_server import Reply

    session_id, page = open_branched(pages, served, width)
    answers = page.locator('[data-testid="message"][data-role="assistant"]')
    hold = threading.Event()
    server.push(Reply(text="A summary that never ends. " * 20, hold_after=2, hold=hold))
    page.get_by_test_id("open-tree").click()
    page.locator(".tree li", has_text="The car is slower.").click()
    page.get_by_test_id("dialog").get_by_text("Summarize", exact=True).click()
    expect(page.locator("#status")).to_have_text("summarizing branch… (Esc to cancel)")
    page.keyboard.press("Escape")
    expect(page.locator("#status")).to_have_text("ready")
    hold.set()
    expect(answers).to_have_text("Fly, it is far.")
    tree = served.socket(session_id).ok("get_tree")
    entries = served.socket(session_id).ok("get_entries")["entries"]
    assert not any(e["type"] == "branch_summary" for e in entries)
    assert next(e for e in entries if e["id"] == tree["leafId"])["type"] in ("message", "model_change")
