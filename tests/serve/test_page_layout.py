"""The page's layout in real Chromium: at 375 px the session list is a drawer, nothing
scrolls sideways and the prompt box is usable; at 1280 px the list stays beside the
chat; light and dark follow ``prefers-color-scheme``."""

from __future__ import annotations

import pytest
from support.llm_server import Reply
from support.serve_page import new_session, send

pytestmark = [pytest.mark.requires("chromium"), pytest.mark.process]

ASSISTANT = '[data-testid="message"][data-role="assistant"]'
WIDE = """A wide answer:

| column one | column two | column three | column four | column five | column six |
|---|---|---|---|---|---|
| a fairly long cell | another long cell | and one more | still going | nearly there | the end |

```python
print("a single line of code that is much wider than any phone screen could ever show at once, on purpose")
```

and_a_word_without_any_place_to_break_it_that_goes_on_and_on_and_on_past_the_edge_of_the_screen
"""


def box(page, selector):
    return page.locator(selector).bounding_box()


def test_on_a_phone_the_session_list_is_a_drawer_and_nothing_scrolls_sideways(pages, server, served):
    from playwright.sync_api import expect

    page = pages.open("phone")
    server.push(Reply(text=WIDE))
    new_session(page)
    sidebar = page.locator("#sidebar")
    expect(sidebar).to_be_hidden()  # closed again after New
    send(page, "something wide")
    expect(page.locator(f"{ASSISTANT} table")).to_be_visible()
    page.wait_for_timeout(200)
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    assert page.evaluate("document.body.scrollWidth") <= 375
    for selector in ("#messages", "#composer", "#top", ASSISTANT):
        b = box(page, selector)
        assert b["x"] >= 0 and b["x"] + b["width"] <= 375 + 0.5, (selector, b)
    prompt = box(page, '[data-testid="prompt"]')
    assert prompt["width"] >= 220 and prompt["height"] >= 40, prompt
    chat = box(page, "#messages")
    assert chat["width"] >= 360, chat
    pages.shoot(page, "phone-chat")

    page.get_by_test_id("sessions-toggle").click()
    expect(sidebar).to_be_visible()
    page.wait_for_function("() => document.getElementById('sidebar').getBoundingClientRect().x === 0")
    expect(page.get_by_test_id("sessions").locator("li")).to_have_count(1)
    pages.shoot(page, "phone-drawer")
    page.keyboard.press("Escape")
    expect(sidebar).to_be_hidden()
    page.get_by_test_id("sessions-toggle").click()
    page.mouse.click(360, 400)  # the dimmed chat beside the drawer closes it
    expect(sidebar).to_be_hidden()


def test_a_drawer_opened_while_the_list_loads_stays_open_when_the_page_rejoins_its_session(pages, served):
    """On reload the page rejoins the live session it had; a drawer the user opened
    before the list came back is theirs, and stays open."""
    from playwright.sync_api import expect

    session_id = served.open()
    page = pages.open("phone")
    row = page.locator(f'#sessions li[data-id="{session_id}"]')
    expect(row).to_have_class("current")  # the live session joined at once
    held = []
    page.route("**/api/sessions", lambda route: held.append(route))
    with page.expect_request("**/api/sessions"):
        page.reload()
    page.get_by_test_id("sessions-toggle").click()
    page.wait_for_function("() => document.getElementById('sidebar').getBoundingClientRect().x === 0")
    held[0].continue_()
    expect(row).to_have_class("current")  # rejoined
    expect(page.get_by_test_id("sessions-toggle")).to_have_attribute("aria-expanded", "true")
    expect(page.locator("#sidebar")).to_be_in_viewport()


def test_on_a_desktop_the_session_list_stays_beside_the_chat(pages):
    from playwright.sync_api import expect

    page = pages.open("desktop")
    new_session(page)
    expect(page.locator("#sidebar")).to_be_visible()
    expect(page.get_by_test_id("sessions-toggle")).to_be_hidden()
    side, chat = box(page, "#sidebar"), box(page, "#messages")
    assert side["x"] == 0 and chat["x"] >= side["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280


@pytest.mark.parametrize("scheme,background", [("light", "rgb(255, 255, 255)"), ("dark", "rgb(15, 17, 21)")])
def test_the_page_is_light_or_dark_as_the_system_asks(pages, server, width, scheme, background):
    from playwright.sync_api import expect

    page = pages.open(width, scheme=scheme)
    server.push(Reply(text="Code:\n\n```js\nconst answer = 42;\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |"))
    new_session(page)
    send(page, "show me")
    expect(page.locator(f"{ASSISTANT} .hljs-keyword")).to_have_text("const")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == background
    text = page.evaluate("getComputedStyle(document.body).color")
    assert text != background
    pages.shoot(page, f"{scheme}-{width}")
