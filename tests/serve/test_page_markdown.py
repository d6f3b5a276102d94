"""Answers as Markdown in real Chromium at 1280 and 375 px, by marked, DOMPurify and
highlight.js (vendored): tables, highlighted code with its language and a copy button,
a copy button per message, and the model's HTML kept as text."""

from __future__ import annotations

import pytest
from support.llm_server import Reply
from support.serve_page import new_session, send

pytestmark = [pytest.mark.requires("chromium"), pytest.mark.process]

ASSISTANT = '[data-testid="message"][data-role="assistant"]'
USER = '[data-testid="message"][data-role="user"]'
ANSWER = """## Sizes

| file | lines |
|------|------:|
| `app.py` | 40 |
| util.py | 20 |

```python
def helper():
    return 1
```

- [x] counted
- [ ] tested

See [the docs](https://example.com/docs) and <b>this</b>.
"""


def test_tables_code_with_language_and_highlighting_and_safe_links(pages, server, width):
    from playwright.sync_api import expect

    page = pages.open(width)
    server.push(Reply(text=ANSWER))
    new_session(page)
    send(page, "sizes?")
    answer = page.locator(ASSISTANT)
    expect(answer.locator("h4, h3, h2")).to_have_text("Sizes")
    table = answer.locator("table")
    expect(table.locator("th")).to_have_text(["file", "lines"])
    expect(table.locator("tbody tr")).to_have_count(2)
    expect(table.locator("td code")).to_have_text("app.py")
    expect(answer.get_by_test_id("code-lang")).to_have_text("python")
    expect(answer.locator("pre code .hljs-keyword").first).to_have_text("def")
    expect(answer.locator(".task")).to_have_text(["☑", "☐"])
    link = answer.locator("a")
    expect(link).to_have_attribute("href", "https://example.com/docs")
    expect(link).to_have_attribute("rel", "noopener noreferrer")
    expect(answer).to_contain_text("<b>this</b>")  # the model's HTML, as text
    assert page.evaluate("document.querySelectorAll('#messages b').length") == 0
    pages.shoot(page, f"markdown-{width}")


def test_copy_buttons_copy_a_code_block_and_a_whole_message(pages, server, width):
    from playwright.sync_api import expect

    page = pages.open(width)
    server.push(Reply(text=ANSWER))
    new_session(page)
    send(page, "sizes?")
    answer = page.locator(ASSISTANT)
    expect(answer.locator("table")).to_be_visible()
    answer.get_by_test_id("copy-code").click()
    expect(answer.get_by_test_id("copy-code")).to_have_attribute("data-label", "Copied")
    assert page.evaluate("navigator.clipboard.readText()") == "def helper():\n    return 1"
    answer.hover()
    answer.get_by_test_id("copy-message").click()
    assert page.evaluate("navigator.clipboard.readText()") == ANSWER
    page.locator(USER).hover()
    page.locator(USER).get_by_test_id("copy-message").click()
    assert page.evaluate("navigator.clipboard.readText()") == "sizes?"
    # the buttons' labels are drawn by CSS: no part of the message's text
    expect(page.locator(USER)).to_have_text("sizes?")
