"""Redirects, followed by the providers themselves (httpx does not: keys must stay at their origin)."""

from urllib.parse import urlencode

from support.llm_server import LlmServer, Reply
from support.provider_streams import collect, run

from pi_core.protocol.messages import TextContent, UserMessage
from pi_core.protocol.provider import LlmContext, StreamOptions
from pi_plugins.providers.http import MAX_REDIRECTS, redirect

CONTEXT = LlmContext(system_prompt="Be brief.", messages=[UserMessage(content=[TextContent("Hi")])])


def moved(status: int, origin: str = ""):
    """A reply sending the request on to the same path (and query) with ``moved=1``."""
    def reply(request):
        query = urlencode({**request.query, "moved": ["1"]}, doseq=True)
        return Reply(status=status, headers={"location": f"{origin}{request.path}?{query}"})
    return reply


def test_a_307_is_followed_with_the_same_body_and_headers(llm_server, api):
    llm_server.push(moved(307), Reply(text="Found you."))
    message = run(collect(llm_server.model(api), CONTEXT,
                          StreamOptions(api_key="test-key", max_retries=0)))[1]
    first, second = llm_server.requests
    assert message.text == "Found you." and message.stop_reason == "stop"
    assert second.query["moved"] == ["1"] and second.path == first.path
    assert second.raw == first.raw and second.method == "POST"
    key_headers = {"authorization", "x-api-key", "x-goog-api-key", "api-key"}
    assert {k: v for k, v in second.headers.items() if k in key_headers} == \
        {k: v for k, v in first.headers.items() if k in key_headers} != {}


def test_credentials_are_not_sent_on_to_another_origin(llm_server, api):
    with LlmServer() as other:
        other.push(Reply(text="Elsewhere."))
        llm_server.push(moved(308, other.url))
        message = run(collect(llm_server.model(api), CONTEXT,
                              StreamOptions(api_key="test-key", max_retries=0)))[1]
        [arrived] = other.requests
    assert message.text == "Elsewhere."
    assert arrived.raw == llm_server.requests[0].raw
    assert not {"authorization", "x-api-key", "x-goog-api-key", "api-key"} & set(arrived.headers)
    assert "test-key" not in str(arrived.headers) and "test-key" not in str(arrived.query)


def test_a_redirect_loop_ends_in_an_error_naming_the_status(llm_server):
    llm_server.push(*[moved(307)] * (MAX_REDIRECTS + 1))
    message = run(collect(llm_server.model("openai-completions"), CONTEXT))[1]
    assert message.stop_reason == "error" and "307" in message.error_message
    assert len(llm_server.requests) == MAX_REDIRECTS + 1


def test_a_303_and_a_301_after_a_post_become_a_get_without_a_body():
    headers = {"Authorization": "Bearer k", "Content-Type": "application/json", "X-Trace": "1"}
    for status in (301, 302, 303):
        url, method, kept = redirect("http://h:1/v1/chat", status, "/v2/chat", "POST", headers)
        assert (url, method, kept) == ("http://h:1/v2/chat", "GET",
                                       {"Authorization": "Bearer k", "X-Trace": "1"})
    assert redirect("http://h:1/v1/chat", 307, "https://h:1/x", "POST", headers) == (
        "https://h:1/x", "POST", {"Content-Type": "application/json", "X-Trace": "1"})
