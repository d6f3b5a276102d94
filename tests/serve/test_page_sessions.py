"""The session list and the session's figures in real Chromium at 1280 and 375 px:
sessions named as `pi -r` names them, rename, search, export and delete, the keyboard
walk through the list, and tokens, cost and context use updated live."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.llm_server import Reply
from support.serve_page import new_session, send, show_sessions

pytestmark = [pytest.mark.requires("chromium"), pytest.mark.process]

ASSISTANT = '[data-testid="message"][data-role="assistant"]'


def _two_sessions(page, server):
    from playwright.sync_api import expect

    server.push(Reply(text="About apples."), Reply(text="About pears."))
    first = new_session(page)
    send(page, "tell me about apples")
    expect(page.locator(ASSISTANT)).to_have_text("About apples.")
    second = new_session(page)
    send(page, "and now pears")
    expect(page.locator(ASSISTANT)).to_have_text("About pears.")
    show_sessions(page)
    names = page.get_by_test_id("sessions").get_by_test_id("session-name")
    expect(names).to_have_text(["and now pears", "tell me about apples"])
    return first, second


def test_sessions_are_named_by_their_first_message_and_can_be_searched_and_renamed(pages, served, server, width):
    from playwright.sync_api import expect

    page = pages.open(width)
    first, second = _two_sessions(page, server)
    rows = page.get_by_test_id("sessions").locator("li")
    page.get_by_test_id("session-search").fill("apple")
    expect(rows).to_have_count(1)
    expect(rows.get_by_test_id("session-name")).to_have_text("tell me about apples")
    page.get_by_test_id("session-search").fill("")
    expect(rows).to_have_count(2)
    rows.filter(has_text="apples").hover()
    rows.filter(has_text="apples").get_by_test_id("session-rename").click()
    page.get_by_test_id("dialog-input").fill("Fruit notes")
    page.get_by_test_id("dialog-input").press("Enter")
    expect(page.get_by_test_id("sessions").locator(f'li[data-id="{first}"] .name')).to_have_text("Fruit notes")
    expect(page.locator("#title")).to_contain_text("Fruit notes")
    expect(page.locator(ASSISTANT)).to_have_text("About apples.")  # renaming opened it
    assert served.socket(first).ok("get_state")["sessionName"] == "Fruit notes"
    pages.shoot(page, f"sessions-{width}")


def test_the_list_is_walked_with_the_keyboard(pages, server, width):
    from playwright.sync_api import expect

    page = pages.open(width)
    first, second = _two_sessions(page, server)
    page.get_by_test_id("session-search").focus()
    page.keyboard.press("ArrowDown")
    expect(page.locator("#sessions li:focus")).to_have_attribute("data-id", second)
    page.keyboard.press("ArrowDown")
    expect(page.locator("#sessions li:focus")).to_have_attribute("data-id", first)
    page.keyboard.press("Enter")
    expect(page.locator(ASSISTANT)).to_have_text("About apples.")
    expect(page.locator("#sessions li.current")).to_have_attribute("data-id", first)
    show_sessions(page)
    page.locator(f'#sessions li[data-id="{first}"]').focus()
    page.keyboard.press("F2")
    expect(page.get_by_test_id("dialog-input")).to_be_focused()
    page.keyboard.type("Typed name")
    page.keyboard.press("Enter")
    expect(page.locator(f'#sessions li[data-id="{first}"] .name')).to_have_text("Typed name")


def test_a_session_is_exported_as_html_and_deleted_with_its_file(pages, served, server, width):
    from playwright.sync_api import expect

    page = pages.open(width)
    first, second = _two_sessions(page, server)
    row = page.locator(f'#sessions li[data-id="{first}"]')
    path = Path(served.http.get("/api/sessions").json()["sessions"][1]["path"])
    assert path.exists()
    row.hover()
    with page.expect_download() as waiting:
        row.get_by_test_id("session-export").click()
    exported = Path(waiting.value.path()).read_text()
    assert "tell me about apples" in exported and "<html" in exported.lower()
    show_sessions(page)
    row.hover()
    row.get_by_test_id("session-delete").click()
    expect(page.get_by_test_id("dialog").locator("h2")).to_have_text("Delete this session?")
    page.get_by_test_id("dialog-yes").click()
    expect(page.locator("#sessions li")).to_have_count(1)
    assert not path.exists()
    expect(page.locator(ASSISTANT)).to_have_text("About pears.")  # the open one stays


def test_tokens_cost_and_context_use_are_shown_and_follow_each_answer(pages, server, width):
    from playwright.sync_api import expect

    page = pages.open(width)
    server.push(Reply(text="One.", usage={"input": 1200, "output": 345}),
                Reply(text="Two.", usage={"input": 2400, "output": 55}))
    new_session(page)
    stats = page.get_by_test_id("stats")
    expect(stats).to_contain_text("↑0 ↓0")
    send(page, "first")
    expect(stats).to_contain_text("↑1.2k ↓345")
    expect(stats).to_contain_text("%/")  # the context's share of the window
    send(page, "second")
    expect(stats).to_contain_text("↑3.6k ↓400")
    assert "$" in stats.text_content()
    pages.shoot(page, f"stats-{width}")
