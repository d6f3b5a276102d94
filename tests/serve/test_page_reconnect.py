"""When the server goes away, in real Chromium at 1280 and 375 px: the conversation
stays, the page says so plainly, Send keeps the text, and once the server is back the
page reconnects by itself, reopens the session from its file and carries on."""

from __future__ import annotations

import pytest
from support.llm_server import Reply
from support.serve_page import new_session, send

from .conftest import Served

pytestmark = [pytest.mark.requires("chromium"), pytest.mark.process]

ASSISTANT = '[data-testid="message"][data-role="assistant"]'
USER = '[data-testid="message"][data-role="user"]'


def test_a_server_restart_keeps_the_conversation_and_the_page_reconnects_by_itself(pages, served, server, pi, width):
    from playwright.sync_api import expect

    page = pages.open(width)
    server.push(Reply(text="Before the restart."), Reply(text="After the restart."))
    session = new_session(page)
    send(page, "first")
    expect(page.locator(ASSISTANT)).to_have_text("Before the restart.")
    port = int(served.netloc.rsplit(":", 1)[1])
    served.stop()
    offline = page.get_by_test_id("offline")
    expect(offline).to_be_visible()
    expect(offline).to_contain_text("not answering")
    expect(page.locator(ASSISTANT)).to_have_text("Before the restart.")  # still shown
    expect(page.locator("#status")).to_have_text("disconnected")
    send(page, "typed while it was down")
    expect(page.locator(".toast")).to_contain_text("Not connected")
    assert page.get_by_test_id("prompt").input_value() == "typed while it was down"
    pages.shoot(page, f"offline-{width}")

    again = Served(pi, port=port)
    try:
        expect(offline).to_be_hidden(timeout=20_000)
        expect(page.locator("#status")).to_have_text("ready")
        assert again.serving.sessions.live[session]  # reopened from its file
        expect(page.locator(USER)).to_have_count(1)
        page.get_by_test_id("prompt").press("Enter")
        expect(page.locator(ASSISTANT).last).to_have_text("After the restart.")
        expect(page.locator(USER)).to_have_count(2)
        expect(page.locator(ASSISTANT)).to_have_count(2)
    finally:
        again.stop()


def test_a_connection_closed_mid_answer_catches_up_with_since_and_doubles_nothing(pages, served, server, width):
    import threading

    from playwright.sync_api import expect

    hold = threading.Event()
    page = pages.open(width)
    page.add_init_script("""window.socketUrls = [];
        window.WebSocket = class extends WebSocket {
            constructor(url, protocols) { super(url, protocols); window.socketUrls.push(url); } };""")
    page.reload()
    server.push(Reply(text="Streamed before the drop, and the rest after it.", delta_size=6, hold_after=3, hold=hold))
    session = new_session(page)
    send(page, "go")
    expect(page.locator(ASSISTANT)).to_contain_text("Streamed")
    live = served.live(session)
    [client] = list(live.clients)
    served.loop.call_soon_threadsafe(client.behind.set)  # as a client too far behind: closed with 1013
    for _ in range(200):  # the page came back on a new connection
        if live.clients and client not in live.clients:
            break
        page.wait_for_timeout(25)
    assert live.clients and client not in live.clients
    hold.set()
    expect(page.locator(ASSISTANT)).to_have_text("Streamed before the drop, and the rest after it.")
    expect(page.locator(ASSISTANT)).to_have_count(1)
    expect(page.locator(USER)).to_have_count(1)
    expect(page.locator("#status")).to_have_text("ready")
    urls = page.evaluate("window.socketUrls")
    assert urls[0].endswith("&since=0") and len(urls) == 2
    assert int(urls[1].rsplit("&since=", 1)[1]) > 0  # caught up from the last seq it saw
