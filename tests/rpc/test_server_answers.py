"""A server's odd answers, as a user of ``pi --mode rpc`` sees them: a rate limit that
asks for an hour and an HTML page instead of a stream end the run at once, with an
error that says what the server did, and no retry at either level."""

import time

from support.llm_server import Reply
from support.rpc import write_settings


def test_a_429_asking_for_an_hour_ends_within_a_second_naming_the_status_and_the_wait(start_rpc, server, pi):
    server.push(*[Reply(status=429, error="Rate limit reached", headers={"Retry-After": "3600"})] * 4)
    rpc = start_rpc()
    started = time.monotonic()
    rpc.ok("prompt", message="hi")
    end = rpc.event("agent_end")
    assert time.monotonic() - started < 1.0
    error = end["messages"][-1]["errorMessage"]
    assert "429" in error and "asked to wait 3600 s" in error
    assert len(server.requests) == 1
    assert not rpc.events("auto_retry_start")


def test_retry_provider_max_retry_delay_ms_sets_the_cap(start_rpc, server, pi):
    write_settings(pi, retry={"baseDelayMs": 5, "provider": {"maxRetryDelayMs": 500}})
    server.push(Reply(status=503, error="busy", headers={"retry-after": "1"}), Reply(text="unused"))
    rpc = start_rpc()
    rpc.ok("prompt", message="hi")
    error = rpc.event("agent_end")["messages"][-1]["errorMessage"]
    assert "503" in error and "asked to wait 1 s" in error and "(0.5 s)" in error
    assert len(server.requests) == 1


def test_an_html_page_with_status_200_ends_after_one_request_naming_text_html(start_rpc, server, pi):
    portal = "<html><head><title>Sign in to the guest network</title></head><body>Accept the terms</body></html>"
    server.push(*[Reply(raw=portal, content_type="text/html")] * 4)
    rpc = start_rpc()
    rpc.ok("prompt", message="hi")
    error = rpc.event("agent_end")["messages"][-1]["errorMessage"]
    assert "text/html" in error and "Sign in to the guest network" in error
    assert "Connection lost" not in error
    assert len(server.requests) == 1
    assert not rpc.events("auto_retry_start")
