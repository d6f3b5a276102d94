"""The framing and error rules of RPC mode: ids, malformed lines, LF-only lines, the end."""

import json
import signal

import pytest

from support.llm_server import Reply


def test_responses_echo_the_request_id_and_leave_it_out_when_none_was_given(rpc):
    response = rpc.request("get_state")
    assert response["id"] == "req-1" and response["type"] == "response"
    assert response["command"] == "get_state" and response["success"] is True
    rpc.write(json.dumps({"type": "set_auto_retry", "enabled": True}))
    anonymous = rpc.event("response", command="set_auto_retry")
    assert "id" not in anonymous and anonymous["success"] is True and "data" not in anonymous


def test_a_malformed_line_gets_an_error_response_and_the_process_keeps_serving(rpc):
    rpc.write("this is not json")
    parse_error = rpc.event("response", command="parse")
    assert parse_error["success"] is False
    assert parse_error["error"].startswith("Failed to parse command:")
    rpc.write("[1, 2]")
    assert "expected a JSON object" in rpc.event("response", after=rpc.position(parse_error) + 1)["error"]
    rpc.write(b'{"type": "get_state", "id": "\xff"}')
    assert "not UTF-8" in rpc.event("response", after=rpc.position(parse_error) + 2)["error"]

    unknown = rpc.request("launch_rockets")
    assert unknown == {"id": unknown["id"], "type": "response", "command": "launch_rockets",
                       "success": False, "error": "Unknown command: launch_rockets"}
    missing = rpc.request("prompt")
    assert missing["success"] is False and "'message' must be a string" in missing["error"]
    wrong = rpc.request("set_steering_mode", mode="sometimes")
    assert wrong["success"] is False and "'mode' must be one of" in wrong["error"]
    images = rpc.request("prompt", message="look", images=[{"type": "image"}])
    assert images["success"] is False and "images[0]" in images["error"]

    assert rpc.ok("get_state")["isStreaming"] is False
    assert rpc.close() == 0


def test_lines_split_on_lf_only_and_a_trailing_cr_is_dropped(rpc, server):
    server.push(Reply(text="ok"))
    text = "one\u2028two\u2029three"
    rpc.write(json.dumps({"id": "crlf", "type": "prompt", "message": text}, ensure_ascii=False) + "\r")
    assert rpc.response_to("crlf")["success"] is True
    rpc.event("agent_end")
    sent = server.requests[0].body["messages"][-1]["content"]
    assert text in json.dumps(sent, ensure_ascii=False)
    [user] = [m for m in rpc.ok("get_messages")["messages"] if m["role"] == "user"]
    assert user["content"][0]["text"] == text


@pytest.mark.process
def test_stdin_eof_aborts_the_running_prompt_and_closes_the_session(rpc_process, server, pi):
    rpc = rpc_process
    server.push(Reply(text="word " * 400, delta_size=5, delay=0.02))
    rpc.ok("prompt", message="talk for a long time")
    rpc.event("message_update")
    assert rpc.close(timeout=10) == 0
    end = [l for l in rpc.events("message_end") if l["message"]["role"] == "assistant"][-1]
    assert end["message"]["stopReason"] == "aborted"
    assert rpc.events("agent_end")
    [session] = pi.sessions()
    lines = [json.loads(l) for l in session.read_text().splitlines()]
    assert lines[-1]["type"] == "message" and lines[-1]["message"]["stopReason"] == "aborted"


@pytest.mark.process
def test_sigterm_ends_the_process_like_eof_with_exit_code_143(rpc_process):
    rpc = rpc_process
    rpc.ok("get_state")
    rpc.process.send_signal(signal.SIGTERM)
    assert rpc.process.wait(10) == 143


def test_a_line_longer_than_one_read_arrives_whole(rpc, server):
    server.push(Reply(text="got it"))
    text = "".join(f"{n:07d} " for n in range(40_000))  # 320 KB, several reads of stdin
    rpc.ok("prompt", message=text)
    rpc.event("agent_end")
    [user] = [m for m in rpc.ok("get_messages")["messages"] if m["role"] == "user"]
    assert user["content"][0]["text"] == text


@pytest.mark.process
def test_a_client_that_stops_reading_ends_the_process_like_eof(pi, server):
    """stdout closed by the reader: nobody hears what pi says, so it aborts the run,
    saves the session and exits 0, without waiting for stdin to end."""
    server.push(Reply(text="word " * 400, delta_size=5, delay=0.02))
    process = pi.popen("--mode", "rpc")
    try:
        process.stdin.write(json.dumps({"id": "1", "type": "prompt", "message": "talk"}) + "\n")
        process.stdin.flush()
        for line in process.stdout:
            if json.loads(line).get("type") == "message_update":
                break
        process.stdout.close()
        assert process.wait(10) == 0
    finally:
        if process.poll() is None:
            process.kill()
        process.stdin.close()
        process.stderr.close()
    [session] = pi.sessions()
    last = json.loads(session.read_text().splitlines()[-1])
    assert last["type"] == "message" and last["message"]["stopReason"] == "aborted"
