"""Files from ``javascript_repl``, as pi web-ui's ``returnDownloadableFile``: the model is
told each file's name and type ("[Files returned: N]"), the result's ``details.files``
keeps them, and the page offers each for download and, where it can show the kind
(text, SVG, images, HTML, Markdown, PDF/Word/Excel), as an artifact; in real Chromium at
1280 and 375 px. The REPL's time limit is the ``javascriptReplTimeoutMs`` setting."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from support.llm_server import Reply
from support.office_documents import docx
from support.serve_page import new_session, send

ASSISTANT = '[data-testid="message"][data-role="assistant"]'
REPL_ENTRY = '[data-testid="message"][data-role="tool"][data-tool="javascript_repl"]'
MINUTES = docx(["Minutes of the meeting", "The budget was approved."])
FILES = {"title": "Making files", "code": f"""
await returnDownloadableFile("data.csv", "a,b\\n1,2\\n", "text/csv");
returnDownloadableFile("chart.svg", '<svg xmlns="http://www.w3.org/2000/svg" width="60" height="60"><circle id="dot" cx="30" cy="30" r="20"/></svg>', "image/svg+xml");
returnDownloadableFile("bytes.bin", new Uint8Array([0, 1, 2, 255]), "application/octet-stream");
const minutes = Uint8Array.from(atob("{base64.b64encode(MINUTES).decode()}"), (c) => c.charCodeAt(0));
returnDownloadableFile("minutes.docx", new Blob([minutes], {{ type: "application/vnd.openxmlformats-officedocument.wordprocessingml.document" }}));
return "made";"""}
LISTED = ("[Files returned: 4]\n  - data.csv (text/csv)\n  - chart.svg (image/svg+xml)\n"
          "  - bytes.bin (application/octet-stream)\n"
          "  - minutes.docx (application/vnd.openxmlformats-officedocument.wordprocessingml.document)")


def _tool_text(request) -> str:
    message = request.body["messages"][-1]
    assert message["role"] == "tool", message
    content = message["content"]
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


@pytest.mark.requires("chromium")
@pytest.mark.process
def test_files_the_code_returns_are_named_to_the_model_and_offered_to_the_user(pages, server, served, width):
    from playwright.sync_api import expect

    server.push(Reply(tool_calls=[("javascript_repl", FILES)]), Reply(text="Your files are ready."))
    page = pages.open(width)
    session_id = new_session(page)
    send(page, "make me some files")
    expect(page.locator(ASSISTANT).last).to_have_text("Your files are ready.")
    assert _tool_text(server.wait_for_requests(2)[1]) == "=> made\n" + LISTED
    files = page.locator(REPL_ENTRY).get_by_test_id("repl-file")
    expect(files.locator(".repl-file-name")).to_have_text(["data.csv", "chart.svg", "bytes.bin", "minutes.docx"])
    expect(files.nth(2).get_by_test_id("repl-file-open")).to_have_count(0)  # bytes: a download only
    pages.shoot(page, f"repl-files-{width}")

    with page.expect_download() as waiting:
        files.nth(2).get_by_test_id("repl-file-download").click()
    assert waiting.value.suggested_filename == "bytes.bin"
    assert Path(waiting.value.path()).read_bytes() == bytes([0, 1, 2, 255])

    frame = page.frame_locator('[data-testid="artifact"]')
    files.nth(1).get_by_test_id("repl-file-open").click()
    expect(frame.locator("#dot")).to_have_count(1)
    expect(page.get_by_test_id("artifact-tab")).to_have_text(["chart.svg"])
    with page.expect_download() as waiting:
        page.get_by_test_id("artifact-download").click()
    assert waiting.value.suggested_filename == "chart.svg"
    _close_on_phone(page, width)

    files.nth(0).get_by_test_id("repl-file-open").click()
    expect(frame.locator("pre")).to_have_text("a,b\n1,2\n")  # text as text, never parsed
    _close_on_phone(page, width)

    files.nth(3).get_by_test_id("repl-file-open").click()
    expect(frame.locator("article.docx")).to_contain_text("Minutes of the meeting")
    pages.shoot(page, f"repl-file-docx-{width}")

    result = next(m for m in served.socket(session_id).ok("get_messages")["messages"] if m["role"] == "toolResult")
    kept = {f["fileName"]: f for f in result["details"]["files"]}
    assert base64.b64decode(kept["minutes.docx"]["contentBase64"]) == MINUTES
    assert kept["data.csv"]["size"] == 8


def _close_on_phone(page, width):
    if width == "phone":  # the panel covers the chat there
        page.locator("#artifact-close").click()


@pytest.mark.requires("chromium")
@pytest.mark.process
def test_a_blob_without_a_type_is_refused_as_pi_web_ui_refuses_it(pages, server):
    from playwright.sync_api import expect

    code = {"title": "Untyped", "code": 'await returnDownloadableFile("x.bin", new Blob([new Uint8Array([1])]));'}
    server.push(Reply(tool_calls=[("javascript_repl", code)]), Reply(text="Refused."))
    page = pages.open("desktop")
    new_session(page)
    send(page, "untyped")
    expect(page.locator(ASSISTANT).last).to_have_text("Refused.")
    assert "Error: returnDownloadableFile: MIME type is required for Blob content" in \
        _tool_text(server.wait_for_requests(2)[1])


@pytest.mark.requires("chromium")
@pytest.mark.process
def test_the_repl_time_limit_is_the_javascript_repl_timeout_ms_setting(pages, server, served, pi):
    from playwright.sync_api import expect

    (pi.agent_dir / "settings.json").write_text(json.dumps({"javascriptReplTimeoutMs": 1500}))
    served.serving.sessions.env.reload_settings()
    server.push(Reply(tool_calls=[("javascript_repl", {"title": "Spinning", "code": "while (true) {}"})]),
                Reply(text="It never ended."))
    page = pages.open("desktop")
    new_session(page)
    send(page, "spin")
    expect(page.locator(ASSISTANT).last).to_have_text("It never ended.")
    text = _tool_text(server.wait_for_requests(2)[1])
    assert "Execution timed out after 1.5 s" in text
    assert "javascriptReplTimeoutMs" in text


def test_returned_files_that_are_malformed_or_too_big_are_left_out_and_said_so(monkeypatch):
    from pi_plugins.serve import browser_tools

    monkeypatch.setattr(browser_tools, "FILES_LIMIT", 10)
    ok = base64.b64encode(b"12345678").decode()
    result = browser_tools.result_of({"console": [], "files": [
        {"fileName": "../../etc/a.txt", "mimeType": "text/plain", "contentBase64": ok},
        {"fileName": "bad.txt", "mimeType": "text/plain", "contentBase64": "not base64!"},
        {"fileName": "big.txt", "contentBase64": ok},
        {"mimeType": "text/plain"},
    ]})
    assert result.details["files"] == [{"fileName": "a.txt", "mimeType": "text/plain", "size": 8, "contentBase64": ok}]
    text = result.content[0].text
    assert text.startswith("[Files returned: 1]\n  - a.txt (text/plain)\n[Files not kept: ")
    assert "bad.txt: its content is not base64" in text
    assert "big.txt: over 10 bytes of files in one call" in text
    assert "a file without a name or content" in text


@pytest.mark.requires("chromium")
@pytest.mark.process
def test_files_past_the_limit_stay_in_the_page_and_the_model_is_told(pages, server, monkeypatch):
    from playwright.sync_api import expect

    from pi_plugins.serve import browser_tools

    monkeypatch.setattr(browser_tools, "FILES_LIMIT", 10)
    code = {"title": "Two files", "code": 'returnDownloadableFile("small.txt", "12345");\n'
                                          'returnDownloadableFile("big.txt", "0123456789");'}
    server.push(Reply(tool_calls=[("javascript_repl", code)]), Reply(text="One kept."))
    page = pages.open("desktop")
    new_session(page)
    send(page, "two files")
    expect(page.locator(ASSISTANT).last).to_have_text("One kept.")
    assert _tool_text(server.wait_for_requests(2)[1]) == (
        "[Files returned: 1]\n  - small.txt (text/plain)\n[Files not kept: big.txt: over 10 bytes of files in one call]")
    expect(page.locator(REPL_ENTRY).get_by_test_id("repl-file")).to_have_count(1)


@pytest.mark.requires("chromium")
@pytest.mark.process
def test_the_code_reads_what_the_user_attached_as_pi_web_ui_lets_it(pages, server, width):
    """pi web-ui's attachments runtime: listAttachments(), readTextAttachment(id) and
    readBinaryAttachment(id) give the code the session's attachments, a Word document
    whose bytes never went to the model included."""
    from playwright.sync_api import expect

    code = {"title": "Reading the attachments", "code": (
        "const files = listAttachments();\n"
        "const sizes = files.map((a) => `${a.fileName} ${a.mimeType} ${a.size} ${readBinaryAttachment(a.id).length}`);\n"
        "return sizes.join(', ') + ' | ' + readTextAttachment(files[1].id);")}
    server.push(Reply(tool_calls=[("javascript_repl", code)]), Reply(text="Read them."))
    page = pages.open(width)
    new_session(page)
    page.get_by_test_id("file-input").set_input_files([
        {"name": "minutes.docx", "mimeType": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
         "buffer": MINUTES},
        {"name": "data.csv", "mimeType": "text/csv", "buffer": b"a,b\n1,2\n"}])
    expect(page.get_by_test_id("attachment")).to_have_count(2)
    if width == "phone":
        page.get_by_test_id("artifact-close").click()
    send(page, "what did I attach?")
    expect(page.locator(ASSISTANT).last).to_have_text("Read them.")
    first, second = server.wait_for_requests(2)
    prompt = first.body["messages"][-1]["content"]
    prompt = prompt if isinstance(prompt, str) else "".join(part.get("text", "") for part in prompt)
    assert 'readBinaryAttachment("attachment-' in prompt
    docx_type = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    assert _tool_text(second) == (
        f"=> minutes.docx {docx_type} {len(MINUTES)} {len(MINUTES)}, data.csv text/csv 8 8 | a,b\n1,2\n").strip()
