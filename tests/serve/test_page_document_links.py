"""More ways to open a document artifact, in real Chromium at 1280 and 375 px: a Markdown
link in an answer to a PDF, Word or Excel file on this machine (relative, absolute or
file://) opens it in the document viewer with the server's refusals (outside the
session's folder, missing); other links stay links or text. A document the user
attaches (file input, drop) opens in the same viewer from the page's own copy, refused
over the same cap, and the model is told its name."""

from __future__ import annotations

import base64

import pytest
from support.llm_server import Reply
from support.office_documents import docx, pdf, xlsx
from support.serve_page import new_session, send

pytestmark = [pytest.mark.requires("chromium"), pytest.mark.process]

ASSISTANT = '[data-testid="message"][data-role="assistant"]'
REPORT = pdf(["Quarterly report", "Revenue grew by a third"])
MINUTES = docx(["Minutes of the meeting", "The budget was approved."])


@pytest.fixture
def documents(pi):
    (pi.cwd / "report.pdf").write_bytes(REPORT)
    (pi.cwd / "out").mkdir()
    (pi.cwd / "out" / "budget.xlsx").write_bytes(xlsx("Budget", [["Item", "Cost"], ["Laptops", 1200]]))
    (pi.cwd.parent / "elsewhere.pdf").write_bytes(REPORT)
    return pi.cwd


def _close_on_phone(page, width):
    if width == "phone":  # the panel covers the chat there
        page.get_by_test_id("artifact-close").click()


def test_a_markdown_link_to_a_local_document_opens_it_in_the_viewer(pages, server, documents, width):
    from playwright.sync_api import expect

    cwd = documents.resolve()
    server.push(Reply(text=(
        f"See [the **report**](report.pdf), [the budget](file://{cwd}/out/budget.xlsx), "
        "[a copy](../elsewhere.pdf), [gone](missing.docx?x=1), [on the web](https://example.com/a.pdf) "
        "and [notes](notes.txt).")))
    page = pages.open(width)
    new_session(page)
    send(page, "where are the documents?")
    answer = page.locator(ASSISTANT).last
    links = answer.get_by_test_id("document-link")
    expect(links).to_have_text(["the report", "the budget", "a copy", "gone"])
    expect(links.first.locator("strong")).to_have_text("report")  # the link's own Markdown kept
    expect(answer.locator('a[href="https://example.com/a.pdf"]')).to_have_text("on the web")  # a web link stays one
    expect(answer.locator("a", has_text="notes")).to_have_count(0)  # not a document: its text alone
    expect(answer).to_contain_text("and notes.")
    frame = page.frame_locator('[data-testid="artifact"]')

    links.nth(0).click()
    expect(frame.locator(".textLayer")).to_contain_text("Quarterly report", timeout=30_000)
    pages.shoot(page, f"document-link-pdf-{width}")
    _close_on_phone(page, width)
    links.nth(1).click()
    expect(frame.locator(".sheet h2")).to_have_text("Budget")
    expect(page.get_by_test_id("artifact-tab")).to_have_text(["report.pdf", "budget.xlsx"])
    _close_on_phone(page, width)
    links.nth(2).click()
    expect(page.get_by_test_id("artifact-error")).to_contain_text("outside the session's folder")
    _close_on_phone(page, width)
    links.nth(3).click()
    expect(page.get_by_test_id("artifact-error")).to_contain_text("Cannot open missing.docx: no file")


def test_a_document_the_user_attaches_opens_in_the_viewer_and_the_model_hears_its_name(pages, server, width):
    from playwright.sync_api import expect

    server.push(Reply(text="Noted."))
    page = pages.open(width)
    new_session(page)
    page.get_by_test_id("file-input").set_input_files(
        [{"name": "minutes.docx", "mimeType": "application/octet-stream", "buffer": MINUTES}])
    frame = page.frame_locator('[data-testid="artifact"]')
    expect(frame.locator("article.docx")).to_contain_text("Minutes of the meeting", timeout=30_000)
    chip = page.get_by_test_id("attachment")
    expect(chip).to_contain_text("minutes.docx")
    _close_on_phone(page, width)
    page.evaluate("""(b64) => {
        const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
        const data = new DataTransfer();
        data.items.add(new File([bytes], "report.pdf", { type: "application/pdf" }));
        document.getElementById('messages').dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    }""", base64.b64encode(REPORT).decode())
    expect(frame.locator(".textLayer")).to_contain_text("Revenue grew by a third", timeout=30_000)
    expect(page.get_by_test_id("artifact-tab")).to_have_text(["minutes.docx", "report.pdf"])
    pages.shoot(page, f"document-attached-{width}")
    _close_on_phone(page, width)
    page.evaluate("""() => {
        const data = new DataTransfer();
        data.items.add(new File([new Uint8Array(21 * 1024 * 1024)], "huge.xlsx"));
        document.getElementById('messages').dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    }""")
    expect(page.locator(".toast.error")).to_contain_text(
        "huge.xlsx: 22,020,096 bytes; documents are shown up to 20,971,520")
    expect(chip).to_have_count(2)  # the refused one is not attached
    chip.first.get_by_test_id("attachment-open").click()  # opens again from the chip
    expect(frame.locator("article.docx")).to_contain_text("Minutes of the meeting")
    _close_on_phone(page, width)
    send(page, "here are the papers")
    expect(page.locator(ASSISTANT).last).to_have_text("Noted.")
    prompt = server.wait_for_requests(1)[0].body["messages"][-1]
    text = prompt["content"] if isinstance(prompt["content"], str) else "".join(
        part.get("text", "") for part in prompt["content"])
    assert text.startswith("here are the papers")
    assert f"[The user attached minutes.docx ({len(MINUTES)} bytes): it is shown to them" in text
    assert "report.pdf" in text
    assert "%PDF" not in text  # the bytes stay in the page
