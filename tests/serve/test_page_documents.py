"""Document artifacts in real Chromium at 1280 and 375 px: a PDF, a Word document and an
Excel workbook the agent made in the session's folder, opened from the answer's inline
code or a tool call's path, rendered read-only in the sandboxed frame by the vendored
libraries (loaded only then), with a download and a source view (a hex dump); a broken
file says so in the frame. And the server's ``/file`` serves only such documents, only
from the session's folder, only up to its cap."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.llm_server import Reply
from support.office_documents import XLS_HEADER, docx, pdf, xlsx
from support.serve_page import new_session, send

ASSISTANT = '[data-testid="message"][data-role="assistant"]'
LIBRARIES = ("pdf.min.mjs", "pdf.worker.min.mjs", "mammoth.browser.min.js", "read-excel-file.min.js",
             "document_view.js")


@pytest.fixture
def documents(pi):
    made = {
        "report.pdf": pdf(["Quarterly report", "Revenue grew by a third"]),
        "long.pdf": pdf(*[[f"Page {n} of 40"] for n in range(1, 41)]),
        "minutes.docx": docx(["Minutes of the meeting", "The budget was approved."]),
        "out/budget.xlsx": xlsx("Budget", [["Item", "Cost"], ["Laptops", 1200], ["Desks", 340]]),
        "broken.pdf": b"%PDF-1.4\nthis is not a PDF at all\n",
        "old.xls": XLS_HEADER,
    }
    for name, data in made.items():
        (pi.cwd / name).parent.mkdir(parents=True, exist_ok=True)
        (pi.cwd / name).write_bytes(data)
    return made


@pytest.mark.requires("chromium")
@pytest.mark.process
def test_a_pdf_a_word_document_and_a_workbook_open_read_only(pages, server, documents, width):
    from playwright.sync_api import expect

    page = pages.open(width)
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    server.push(Reply(text="Made `report.pdf`, `minutes.docx` and `out/budget.xlsx` for you."))
    new_session(page)
    send(page, "make the three documents")
    opens = page.locator(ASSISTANT).get_by_test_id("document-open")
    expect(opens).to_have_count(3)
    assert not [url for url in asked if url.endswith(LIBRARIES)]  # nothing loaded until one opens
    frame = page.frame_locator('[data-testid="artifact"]')

    opens.nth(0).click()
    expect(frame.locator("body")).to_have_attribute("data-state", "shown", timeout=30_000)
    expect(frame.locator(".textLayer")).to_contain_text("Quarterly report")
    expect(frame.locator(".textLayer")).to_contain_text("Revenue grew by a third")
    inked = frame.locator("#view canvas").evaluate("""(c) => {
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height / 4).data;
        for (let i = 0; i < d.length; i += 4) if (d[i] < 128 && d[i + 3] > 0) return true;
        return false; }""")
    assert inked, "the PDF's page was drawn blank"
    pages.shoot(page, f"artifact-pdf-{width}")
    close_on_phone(page, width)

    opens.nth(1).click()
    expect(frame.locator("article.docx")).to_contain_text("Minutes of the meeting")
    expect(frame.locator("article.docx p").nth(1)).to_have_text("The budget was approved.")
    expect(frame.locator("article.docx p").nth(1)).to_be_visible()
    pages.shoot(page, f"artifact-docx-{width}")
    close_on_phone(page, width)

    opens.nth(2).click()
    expect(frame.locator(".sheet h2")).to_have_text("Budget")
    expect(frame.locator(".sheet tr").nth(1)).to_have_text("Laptops1200")
    expect(frame.get_by_text("Desks")).to_be_visible()
    pages.shoot(page, f"artifact-xlsx-{width}")

    expect(page.get_by_test_id("artifact-tab")).to_have_text(["report.pdf", "minutes.docx", "budget.xlsx"])
    with page.expect_download() as waiting:
        page.get_by_test_id("artifact-download").click()
    assert waiting.value.suggested_filename == "budget.xlsx"
    assert Path(waiting.value.path()).read_bytes() == documents["out/budget.xlsx"]

    page.get_by_test_id("artifact-tab").nth(0).click()
    page.get_by_test_id("artifact-source").click()
    source = page.get_by_test_id("artifact-code")
    expect(source).to_contain_text("report.pdf — application/pdf")
    expect(source).to_contain_text("binary file")
    expect(source).to_contain_text("%PDF-1.4")  # the dump's text column
    expect(source).to_contain_text("00000000  25 50 44 46")
    with page.expect_download() as waiting:
        page.get_by_test_id("artifact-download").click()
    assert Path(waiting.value.path()).read_bytes() == documents["report.pdf"]
    pages.shoot(page, f"artifact-pdf-source-{width}")


@pytest.mark.requires("chromium")
@pytest.mark.process
def test_a_long_pdf_draws_its_pages_as_they_come_into_view(pages, server, documents):
    from playwright.sync_api import expect

    page = pages.open("desktop")
    server.push(Reply(text="See `long.pdf`."))
    new_session(page)
    send(page, "a long one")
    page.locator(ASSISTANT).get_by_test_id("document-open").click()
    frame = page.frame_locator('[data-testid="artifact"]')
    expect(frame.locator(".page")).to_have_count(40, timeout=30_000)
    expect(frame.locator('.page[data-page="1"] .textLayer')).to_contain_text("Page 1 of 40")
    last = frame.locator('.page[data-page="40"]')
    assert last.get_attribute("data-drawn") is None  # far below: not drawn yet
    last.scroll_into_view_if_needed()
    expect(last).to_have_attribute("data-drawn", "true")
    expect(last.locator(".textLayer")).to_contain_text("Page 40 of 40")
    assert frame.locator(".page[data-drawn]").count() < 40


def close_on_phone(page, width):
    if width == "phone":  # the panel covers the chat there
        page.get_by_test_id("artifact-close").click()


@pytest.mark.requires("chromium")
@pytest.mark.process
def test_a_broken_document_says_so_in_the_frame(pages, server, documents, width):
    from playwright.sync_api import expect

    page = pages.open(width)
    server.push(Reply(tool_calls=[("write", {"path": "notes.docx", "content": "plain text, not a Word file"})]),
                Reply(text="Also see `broken.pdf`, `old.xls` and `missing.xlsx`."))
    new_session(page)
    send(page, "write notes.docx")
    expect(page.locator(ASSISTANT).last).to_contain_text("missing.xlsx")
    frame = page.frame_locator('[data-testid="artifact"]')
    alert = frame.locator('[role="alert"]')

    page.locator('[data-testid="message"][data-tool="write"]').get_by_test_id("document-open").click()
    expect(alert).to_contain_text("Cannot show notes.docx as a Word document", timeout=30_000)
    expect(alert).to_be_visible()
    pages.shoot(page, f"artifact-broken-{width}")
    close_on_phone(page, width)
    opens = page.locator(ASSISTANT).last.get_by_test_id("document-open")
    opens.nth(0).click()
    expect(alert).to_contain_text("Cannot show broken.pdf as a PDF", timeout=30_000)
    close_on_phone(page, width)
    opens.nth(1).click()
    expect(alert).to_contain_text("Excel 97-2003 workbook (.xls")
    close_on_phone(page, width)
    opens.nth(2).click()
    expect(page.get_by_test_id("artifact-error")).to_contain_text("Cannot open missing.xlsx: no file")



# ---------------------------------------------------------------- the server's /file


def test_the_file_route_serves_a_document_of_the_session_folder(served, documents):
    session = served.open()
    answer = served.http.get(f"/api/sessions/{session}/file", params={"path": "report.pdf"})
    assert answer.status_code == 200
    assert answer.content == documents["report.pdf"]
    assert answer.headers["content-type"] == "application/pdf"
    assert answer.headers["x-content-type-options"] == "nosniff"
    nested = served.http.get(f"/api/sessions/{session}/file", params={"path": "out/budget.xlsx"})
    assert nested.content == documents["out/budget.xlsx"]


def test_the_file_route_refuses_what_is_not_a_document_of_the_folder(served, documents, pi, tmp_path, monkeypatch):
    from pi_plugins.serve import files

    session = served.open()
    (pi.cwd / "secret.txt").write_text("not a document")
    outside = tmp_path / "elsewhere.pdf"
    outside.write_bytes(documents["report.pdf"])
    (pi.cwd / "link.pdf").symlink_to(outside)
    (pi.cwd / "folder.pdf").mkdir()

    def status(path: str) -> tuple[int, str]:
        answer = served.http.get(f"/api/sessions/{session}/file", params={"path": path})
        return answer.status_code, answer.json()["error"]

    assert status("secret.txt")[0] == 415
    assert served.http.get(f"/api/sessions/{session}/file").status_code == 400
    assert status(str(outside))[0] == 403
    assert status("../elsewhere.pdf")[0] == 403
    assert status("link.pdf")[0] == 403  # a symlink out of the folder
    assert status("nothing.pdf") == (404, f"no file 'nothing.pdf' in {pi.cwd.resolve()}")
    assert status("folder.pdf")[0] == 404
    monkeypatch.setattr(files, "MAX_DOCUMENT_BYTES", 100)
    code, message = status("report.pdf")
    assert code == 413 and "documents are shown up to 100" in message
    no_token = served.http.get(f"/api/sessions/{session}/file", params={"path": "report.pdf"},
                               headers={"Authorization": ""})
    assert no_token.status_code == 401
