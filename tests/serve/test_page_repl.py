"""``javascript_repl`` in real Chromium at 1280 and 375 px: the model's code runs in the
page, in a sandboxed frame that reaches neither the page nor the network; what it logs
and returns reaches the model in its next request; an endless loop is stopped by the
timeout and the page stays usable; the page's Abort stops it; a page closed mid-run
gives the tool an error."""

from __future__ import annotations

import json

import pytest
from support.llm_server import Reply
from support.serve_page import new_session, send

pytestmark = [pytest.mark.requires("chromium"), pytest.mark.process]

ASSISTANT = '[data-testid="message"][data-role="assistant"]'
REPL_ENTRY = '[data-testid="message"][data-role="tool"][data-tool="javascript_repl"]'
FRAME = '[data-testid="repl-frame"]'
SUM = {"title": "Adding up", "code": "console.log('sum', 1 + 2);\nconsole.warn({ ok: true });\nreturn { a: [1, 2] };"}
SANDBOX = {"title": "Probing the sandbox", "code": """
let page = "blocked", net = "blocked", storage = "blocked";
try { page = parent.document.title; } catch {}
try { await fetch("/api/health"); net = "reached"; } catch {}
try { storage = String(sessionStorage.getItem("pi-token")); } catch {}
console.log(page, net, storage, self.origin);
return 6 * 7;"""}
LOOP = {"title": "Spinning", "code": "while (true) {}"}


def _tool_text(request) -> str:
    message = request.body["messages"][-1]
    assert message["role"] == "tool", message
    content = message["content"]
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


def test_the_code_runs_in_the_page_and_its_output_reaches_the_model(pages, server, width):
    from playwright.sync_api import expect

    server.push(Reply(tool_calls=[("javascript_repl", SUM)]), Reply(text="The sum is 3."))
    page = pages.open(width)
    new_session(page)
    send(page, "add one and two")
    expect(page.locator(ASSISTANT).last).to_have_text("The sum is 3.")
    assert _tool_text(server.wait_for_requests(2)[1]) == 'sum 3\n{\n  "ok": true\n}\n\n=> {\n  "a": [\n    1,\n    2\n  ]\n}'
    entry = page.locator(REPL_ENTRY)
    expect(entry.locator(".tool-head")).to_contain_text("Adding up")
    expect(entry.locator("pre.output")).to_contain_text("=> {")
    entry.locator("details.repl-code summary").click()
    expect(entry.locator("details.repl-code pre")).to_contain_text("console.log('sum', 1 + 2);")
    expect(page.locator(FRAME)).to_have_count(0)  # each call's frame goes with it
    pages.shoot(page, f"repl-result-{width}")


def test_the_code_reaches_neither_the_page_nor_the_network(pages, server):
    from playwright.sync_api import expect

    server.push(Reply(tool_calls=[("javascript_repl", SANDBOX)]), Reply(text="Sandboxed."))
    page = pages.open("desktop")
    new_session(page)
    send(page, "probe")
    expect(page.locator(ASSISTANT).last).to_have_text("Sandboxed.")
    assert _tool_text(server.wait_for_requests(2)[1]) == "blocked blocked blocked null\n\n=> 42"


def test_a_thrown_error_goes_back_as_a_tool_error(pages, server):
    from playwright.sync_api import expect

    code = {"title": "Failing", "code": "console.log('about to fail');\nnull.property;"}
    server.push(Reply(tool_calls=[("javascript_repl", code)]), Reply(text="It threw."))
    page = pages.open("desktop")
    new_session(page)
    send(page, "fail")
    expect(page.locator(ASSISTANT).last).to_have_text("It threw.")
    text = _tool_text(server.wait_for_requests(2)[1])
    assert text.startswith("about to fail\n\nError: Cannot read properties of null (reading 'property')\nTypeError:")
    last = server.requests[1].body["messages"][-1]
    expect(page.locator(REPL_ENTRY).locator("pre.output.error")).to_contain_text("Cannot read properties of null")
    assert last["role"] == "tool"


def test_an_endless_loop_is_stopped_by_the_timeout_and_the_page_stays_usable(pages, server, width, monkeypatch):
    from playwright.sync_api import expect

    from pi_plugins.serve import browser_tools

    monkeypatch.setattr(browser_tools, "REPL_TIMEOUT", 2.0)
    server.push(Reply(tool_calls=[("javascript_repl", LOOP)]), Reply(text="It never ended."),
                Reply(text="Still here."))
    page = pages.open(width)
    new_session(page)
    send(page, "spin")
    expect(page.locator(FRAME)).to_have_count(1)
    expect(page.locator(ASSISTANT).last).to_have_text("It never ended.")
    assert "Execution timed out after 2 s" in _tool_text(server.wait_for_requests(2)[1])
    expect(page.locator(FRAME)).to_have_count(0)  # the looping code went with its frame
    expect(page.locator(REPL_ENTRY).locator("pre.output.error")).to_contain_text("timed out")
    send(page, "are you there?")
    expect(page.locator(ASSISTANT).last).to_have_text("Still here.")
    pages.shoot(page, f"repl-timeout-{width}")


def test_the_pages_abort_stops_the_code(pages, server):
    from playwright.sync_api import expect

    server.push(Reply(tool_calls=[("javascript_repl", LOOP)]), Reply(text="unused"))
    page = pages.open("desktop")
    new_session(page)
    send(page, "spin")
    expect(page.locator(FRAME)).to_have_count(1)
    page.locator("#abort").click()
    expect(page.locator(FRAME)).to_have_count(0)
    expect(page.locator("#status")).to_have_text("ready")
    assert len(server.requests) == 1  # aborted: no answer went to the model


def test_a_page_closed_mid_run_gives_the_tool_an_error(pages, server, served):
    from playwright.sync_api import expect

    server.push(Reply(tool_calls=[("javascript_repl", LOOP)]), Reply(text="The page went away."))
    page = pages.open("desktop")
    session = new_session(page)
    watcher = served.socket(session)  # as pi connect would watch it
    send(page, "spin")
    expect(page.locator(FRAME)).to_have_count(1)
    page.close()
    end = watcher.event("tool_execution_end", toolName="javascript_repl")
    assert end["isError"] is True
    assert "the page running the code closed" in json.dumps(end["result"])
    watcher.event("agent_end")
    assert "the page running the code closed" in _tool_text(server.wait_for_requests(2)[1])
