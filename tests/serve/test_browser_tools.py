"""``javascript_repl`` on the server's side, with a WebSocket client standing in for the
page: offered to the model only while a page that runs it is attached, sent to that page
alone, its answer worded as pi web-ui words it; and every way it can end without an
answer (no page, the page closing, the timeout, an abort) a clear tool error at once."""

from __future__ import annotations

import threading
import time

from support.llm_server import Reply
from support.routing import tool_names

CALL = {"title": "Adding up", "code": "console.log('hi'); return 1 + 1"}


def _tool_text(request) -> str:
    message = request.body["messages"][-1]
    assert message["role"] == "tool", message
    content = message["content"]
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)


def _page(served, session):
    page = served.socket(session)
    assert page.ok("offer_browser_tools", tools=["javascript_repl"]) == {"tools": ["javascript_repl"]}
    return page


def _until(condition, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_the_repl_is_offered_to_the_model_only_while_a_page_that_runs_it_is_attached(served, server):
    server.push(Reply(text="one"), Reply(text="two"), Reply(text="three"))
    session = served.open()
    rpc = served.socket(session)  # as pi connect: it never offers
    rpc.ok("prompt", message="first")
    rpc.event("agent_end")
    page = _page(served, session)
    mark = rpc.mark()
    rpc.ok("prompt", message="second")
    rpc.event("agent_end", after=mark)
    page.close()
    _until(lambda: "javascript_repl" not in [t.name for t in served.live(session).harness.agent.tools],
           "the tool to be withdrawn")
    mark = rpc.mark()
    rpc.ok("prompt", message="third")
    rpc.event("agent_end", after=mark)
    requests = server.wait_for_requests(3)
    assert ["javascript_repl" in tool_names(r) for r in requests] == [False, True, False]
    offered = next(t for t in requests[1].body["tools"] if t["function"]["name"] == "javascript_repl")
    assert sorted(offered["function"]["parameters"]["properties"]) == ["code", "title"]


def test_the_pages_answer_reaches_the_model_as_console_lines_then_the_value(served, server):
    server.push(Reply(tool_calls=[("javascript_repl", CALL)]), Reply(text="It is 2."))
    session = served.open()
    rpc, page = served.socket(session), _page(served, session)
    rpc.ok("prompt", message="add")
    request = page.event("browser_tool_request")
    assert request["arguments"] == CALL and request["toolName"] == "javascript_repl"
    assert request["timeoutMs"] > 0
    answered = page.ok("browser_tool_result", requestId=request["id"], returnText="2",
                       console=[{"type": "log", "text": "hi"}, {"type": "warn", "text": "careful"}])
    assert answered == {"accepted": True}
    rpc.event("agent_end")
    assert _tool_text(server.wait_for_requests(2)[1]) == "hi\ncareful\n\n=> 2"
    assert not any(f.get("type") == "browser_tool_request" for f in rpc.frames)  # to the page alone


def test_a_thrown_error_is_a_tool_error_with_its_message_and_stack(served, server):
    server.push(Reply(tool_calls=[("javascript_repl", CALL)]), Reply(text="It failed."))
    session = served.open()
    page = _page(served, session)
    page.ok("prompt", message="add")
    request = page.event("browser_tool_request")
    page.ok("browser_tool_result", requestId=request["id"], console=[{"type": "log", "text": "before"}],
            error={"message": "boom", "stack": "Error: boom\n    at eval"})
    end = page.event("tool_execution_end")
    assert end["isError"] is True
    assert _tool_text(server.wait_for_requests(2)[1]) == "before\n\nError: boom\nError: boom\n    at eval"


def test_code_with_no_output_says_so(served, server):
    server.push(Reply(tool_calls=[("javascript_repl", CALL)]), Reply(text="ok"))
    session = served.open()
    page = _page(served, session)
    page.ok("prompt", message="run")
    page.ok("browser_tool_result", requestId=page.event("browser_tool_request")["id"], console=[])
    page.event("agent_end")
    assert _tool_text(server.wait_for_requests(2)[1]) == "Code executed successfully (no output)"


def test_a_call_made_after_the_last_page_left_fails_at_once_saying_why(served, server):
    hold = threading.Event()
    server.push(Reply(tool_calls=[("javascript_repl", CALL)], hold=hold, hold_after=1), Reply(text="No page."))
    session = served.open()
    rpc, page = served.socket(session), _page(served, session)
    rpc.ok("prompt", message="add")
    server.wait_for_requests(1)
    page.close()
    _until(lambda: not served.live(session).browser_tools.pages, "the page to leave")
    hold.set()
    end = rpc.event("tool_execution_end")
    assert end["isError"] is True
    text = _tool_text(server.wait_for_requests(2)[1])
    assert "no page is attached to this session" in text and "open the session in the page" in text


def test_a_page_closing_mid_run_gives_the_call_an_error_at_once(served, server):
    server.push(Reply(tool_calls=[("javascript_repl", CALL)]), Reply(text="Gone."))
    session = served.open()
    rpc, page = served.socket(session), _page(served, session)
    rpc.ok("prompt", message="add")
    page.event("browser_tool_request")
    started = time.monotonic()
    page.close()
    end = rpc.event("tool_execution_end")
    assert end["isError"] is True and time.monotonic() - started < 5
    assert "the page running the code closed" in _tool_text(server.wait_for_requests(2)[1])


def test_a_call_the_page_never_answers_is_stopped_by_the_timeout(served, server, monkeypatch):
    from pi_plugins.serve import browser_tools

    monkeypatch.setattr(browser_tools, "REPL_TIMEOUT", 0.5)
    server.push(Reply(tool_calls=[("javascript_repl", CALL)]), Reply(text="Too slow."))
    session = served.open()
    page = _page(served, session)
    page.ok("prompt", message="loop")
    request = page.event("browser_tool_request")
    cancel = page.event("browser_tool_cancel")
    assert cancel["id"] == request["id"] and "timed out after 0.5 s" in cancel["reason"]
    page.event("agent_end")
    assert "Execution timed out after 0.5 s" in _tool_text(server.wait_for_requests(2)[1])
    late = page.request("browser_tool_result", requestId=request["id"], console=[])
    assert late["success"] is False and "no browser tool call" in late["error"]


def test_an_abort_cancels_the_call_in_the_page(served, server):
    server.push(Reply(tool_calls=[("javascript_repl", CALL)]), Reply(text="unused"))
    session = served.open()
    rpc, page = served.socket(session), _page(served, session)
    rpc.ok("prompt", message="loop")
    request = page.event("browser_tool_request")
    rpc.ok("abort")
    cancel = page.event("browser_tool_cancel")
    assert cancel == {"type": "browser_tool_cancel", "id": request["id"], "reason": "Execution aborted"}
    rpc.event("agent_end")


def test_with_two_pages_the_newest_runs_the_code_and_the_other_is_left_alone(served, server):
    server.push(Reply(tool_calls=[("javascript_repl", CALL)]), Reply(text="ok"))
    session = served.open()
    older = _page(served, session)
    newer = _page(served, session)
    newer.ok("prompt", message="add")
    request = newer.event("browser_tool_request")
    newer.ok("browser_tool_result", requestId=request["id"], returnText="2", console=[])
    older.event("agent_end")
    assert not any(f.get("type") == "browser_tool_request" for f in older.frames)


def test_an_offer_of_unknown_tools_offers_nothing_and_bad_offers_are_refused(served):
    session = served.open()
    page = served.socket(session)
    assert page.ok("offer_browser_tools", tools=["teleport"]) == {"tools": []}
    refused = page.request("offer_browser_tools", tools="javascript_repl")
    assert refused["success"] is False and "list of tool names" in refused["error"]
    assert "javascript_repl" not in [t.name for t in served.live(session).harness.agent.tools]


def test_only_the_page_running_the_code_may_answer_for_it(served, server):
    server.push(Reply(tool_calls=[("javascript_repl", CALL)]), Reply(text="ok"))
    session = served.open()
    rpc, page = served.socket(session), _page(served, session)
    rpc.ok("prompt", message="add")
    request = page.event("browser_tool_request")
    forged = rpc.request("browser_tool_result", requestId=request["id"], returnText="666", console=[])
    assert forged["success"] is False and "another client" in forged["error"]
    page.ok("browser_tool_result", requestId=request["id"], returnText="2", console=[])
    rpc.event("agent_end")
    assert _tool_text(server.wait_for_requests(2)[1]) == "=> 2"


def test_the_repl_stays_offered_after_the_session_is_replaced_by_a_new_one(served, server):
    server.push(Reply(text="fresh"))
    session = served.open()
    page = _page(served, session)
    page.ok("new_session")
    page.ok("prompt", message="again")
    page.event("agent_end")
    assert "javascript_repl" in tool_names(server.wait_for_requests(1)[0])


def test_the_repl_is_offered_again_after_a_reload_collected_the_tools_anew(served, server):
    import asyncio

    server.push(Reply(text="reloaded"))
    session = served.open()
    page = _page(served, session)
    harness = served.live(session).harness
    asyncio.run_coroutine_threadsafe(harness.reload(), served.loop).result(15)
    assert "javascript_repl" not in [t.name for t in harness.agent.tools]
    page.ok("prompt", message="again")
    page.event("agent_end")
    assert "javascript_repl" in tool_names(server.wait_for_requests(1)[0])
