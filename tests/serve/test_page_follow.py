"""The page follows the conversation, in real Chromium at 1280 and 375 px: it stays at
the end while the reader is there (a prompt and its whole streaming answer included),
lets them read up without pulling them back, offers "jump to latest" meanwhile, and
opens every session at its end (open, switch, reload)."""

from __future__ import annotations

import threading

import pytest
from support.llm_server import Reply
from support.serve_page import new_session, send

pytestmark = [pytest.mark.requires("chromium"), pytest.mark.process]

ASSISTANT = '[data-testid="message"][data-role="assistant"]'
LONG = "\n\n".join(f"Paragraph {n} of a long answer, long enough to fill a screen or two." for n in range(60))
DISTANCE = "(() => { const m = document.getElementById('messages'); return m.scrollHeight - m.scrollTop - m.clientHeight; })()"


def distance(page) -> float:
    return page.evaluate(DISTANCE)


def test_from_the_end_a_prompt_and_its_whole_streaming_answer_stay_in_view(pages, server, width):
    from playwright.sync_api import expect

    page = pages.open(width)
    server.push(Reply(text=LONG), Reply(text=LONG.replace("Paragraph", "Streamed"), delta_size=40, delay=0.005))
    new_session(page)
    send(page, "fill the screen")
    expect(page.locator(ASSISTANT).last).to_contain_text("Paragraph 59")
    page.wait_for_function(f"() => {DISTANCE} <= 1")
    send(page, "and again")
    seen = []
    while "Streamed 59" not in (page.locator(ASSISTANT).last.text_content() or ""):
        seen.append(distance(page))
        page.wait_for_timeout(30)
    expect(page.locator("#status")).to_have_text("ready")
    seen.append(distance(page))
    assert len(seen) > 3  # sampled while it streamed
    assert max(seen) <= 48, seen
    expect(page.get_by_test_id("jump-latest")).to_be_hidden()
    pages.shoot(page, f"following-{width}")


def test_reading_up_is_left_alone_and_jump_to_latest_brings_the_end_back(pages, server, width):
    from playwright.sync_api import expect

    hold = threading.Event()
    page = pages.open(width)
    server.push(Reply(text=LONG), Reply(text=LONG.replace("Paragraph", "Later"), delta_size=40, hold_after=3, hold=hold))
    new_session(page)
    send(page, "fill the screen")
    expect(page.locator(ASSISTANT).last).to_contain_text("Paragraph 59")
    send(page, "more")
    expect(page.locator(ASSISTANT).last).to_contain_text("Later 0")
    page.locator("#messages").hover()
    page.mouse.wheel(0, -2500)
    page.wait_for_function("() => document.getElementById('messages').scrollTop < 3000")
    page.wait_for_timeout(200)
    top = page.evaluate("document.getElementById('messages').scrollTop")
    jump = page.get_by_test_id("jump-latest")
    expect(jump).to_be_visible()
    hold.set()  # the rest of the answer arrives while the reader is up there
    expect(page.locator(ASSISTANT).last).to_contain_text("Later 59")
    expect(page.locator("#status")).to_have_text("ready")
    assert abs(page.evaluate("document.getElementById('messages').scrollTop") - top) <= 2
    assert distance(page) > 500
    pages.shoot(page, f"reading-up-{width}")
    jump.click()
    page.wait_for_function(f"() => {DISTANCE} <= 1")
    expect(jump).to_be_hidden()


def test_every_session_opens_at_its_end_on_open_switch_and_reload(pages, served, server, width):
    from playwright.sync_api import expect

    page = pages.open(width)
    server.push(Reply(text=LONG))
    first = new_session(page)
    send(page, "fill the screen")
    expect(page.locator(ASSISTANT).last).to_contain_text("Paragraph 59")
    page.reload()
    expect(page.locator(ASSISTANT).last).to_contain_text("Paragraph 59")
    page.wait_for_function(f"() => {DISTANCE} <= 1")
    new_session(page)
    expect(page.locator(ASSISTANT)).to_have_count(0)
    if width == "phone":
        page.get_by_test_id("sessions-toggle").click()
    page.get_by_test_id("sessions").locator(f'li[data-id="{first}"]').click()
    expect(page.locator(ASSISTANT).last).to_contain_text("Paragraph 59")
    page.wait_for_function(f"() => {DISTANCE} <= 1")
    # not live any more: opened from its file, at its end too
    served.http.delete(f"/api/sessions/{first}")
    page.reload()
    if width == "phone":
        page.get_by_test_id("sessions-toggle").click()
    page.get_by_test_id("sessions").locator(f'li[data-id="{first}"]').click()
    expect(page.locator(ASSISTANT).last).to_contain_text("Paragraph 59")
    page.wait_for_function(f"() => {DISTANCE} <= 1")
    pages.shoot(page, f"opened-at-end-{width}")
