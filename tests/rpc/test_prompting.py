"""prompt, steer, follow_up and abort, with the events a client sees."""

import json
import threading

from support.llm_server import Reply

def held_tool(gate):
    """A bash call that runs until the test opens ``gate``."""
    return ("bash", {"command": gate.holds("echo tool-done")})


def user_texts(request) -> list[str]:
    """The text of every user message in a request body (openai-completions)."""
    texts = []
    for message in request.body["messages"]:
        if message["role"] == "user":
            content = message["content"]
            texts.append(content if isinstance(content, str) else "".join(
                part.get("text", "") for part in content))
    return texts


def test_prompt_is_answered_when_accepted_then_streams_pi16_delta_updates(rpc, server):
    server.push(Reply(text="Hello there, friend.", delta_size=4))
    command = rpc.send("prompt", message="hi")
    response = rpc.response_to(command)
    assert response == {"id": command["id"], "type": "response", "command": "prompt", "success": True,
                        "data": {"disposition": "started"}}
    start = rpc.event("agent_start")
    assert rpc.position(response) < rpc.position(start)
    end = rpc.event("agent_end")
    kinds = [l["type"] for l in rpc.lines[rpc.position(start):rpc.position(end) + 1]]
    assert kinds[:4] == ["agent_start", "turn_start", "message_start", "message_end"]
    assert kinds[-2:] == ["turn_end", "agent_end"]
    updates = rpc.events("message_update")
    deltas = [u for u in updates if u["assistantMessageEvent"]["type"] == "text_delta"]
    assert "".join(d["assistantMessageEvent"]["delta"] for d in deltas) == "Hello there, friend."
    # pi 1.6's shape: the delta and the usage so far, no snapshots (linear output)
    assert all("message" not in u and "partial" not in u["assistantMessageEvent"] and "usage" in u
               for u in updates)
    assert end["messages"][-1]["content"] == [{"type": "text", "text": "Hello there, friend."}]
    assert rpc.event("agent_settled") == {"type": "agent_settled", "aborted": False}


def test_events_full_gives_pi_073s_updates_with_message_snapshots(start_rpc, server):
    server.push(Reply(text="Hello there, friend.", delta_size=4))
    rpc = start_rpc("--events", "full")
    rpc.ok("prompt", message="hi")
    rpc.event("agent_end")
    deltas = [u for u in rpc.events("message_update") if u["assistantMessageEvent"]["type"] == "text_delta"]
    so_far = ""
    for update in deltas:
        so_far += update["assistantMessageEvent"]["delta"]
        assert update["message"]["content"][0]["text"] == so_far
        assert update["assistantMessageEvent"]["partial"]["content"][0]["text"] == so_far


def test_events_lean_gives_json_modes_updates_with_the_delta_only(start_rpc, server):
    server.push(Reply(text="Short and lean.", delta_size=4))
    rpc = start_rpc("--events", "lean")
    rpc.ok("prompt", message="hi")
    rpc.event("agent_end")
    updates = rpc.events("message_update")
    assert updates and all("message" not in u and "partial" not in u["assistantMessageEvent"]
                           for u in updates)
    assert rpc.events("message_end")[-1]["message"]["content"][0]["text"] == "Short and lean."


def test_a_prompt_while_busy_needs_a_streaming_behavior(rpc, server):
    streaming = threading.Event()
    server.push(Reply(text="slow " * 50, delta_size=5, hold=streaming), Reply(text="Queued answer."))
    rpc.ok("prompt", message="first")
    rpc.event("message_update")
    refused = rpc.request("prompt", message="second")
    assert refused["success"] is False
    assert refused["error"] == ("Agent is already processing. Specify streamingBehavior "
                                "('steer' or 'followUp') to queue the message.")
    rpc.ok("prompt", message="queued for later", streamingBehavior="followUp")
    queued = rpc.event("queue_update", followUp=["queued for later"])
    assert queued["steering"] == []
    assert rpc.ok("get_state")["pendingMessageCount"] == 1
    streaming.set()
    end = rpc.event("agent_end")
    assert [m["role"] for m in end["messages"]] == ["system", "user", "assistant", "user", "assistant"]
    assert user_texts(server.requests[1])[-1] == "queued for later"
    assert rpc.event("queue_update", followUp=[])["steering"] == []
    assert rpc.ok("get_state")["pendingMessageCount"] == 0


def test_a_steer_while_tools_run_arrives_before_the_next_request(rpc, server, gate):
    server.push(Reply(text="Running it.", tool_calls=[held_tool(gate)]), Reply(text="Steered."))
    rpc.ok("prompt", message="run the slow command")
    rpc.event("tool_execution_start", toolName="bash")
    steer = rpc.send("steer", message="also say hello")
    assert rpc.response_to(steer)["success"] is True
    assert rpc.event("queue_update", steering=["also say hello"])
    assert len(server.requests) == 1, "the steer waits for the running tool"
    gate.open()
    tool_end = rpc.event("tool_execution_end")
    assert "tool-done" in json.dumps(tool_end["result"])
    steered = rpc.wait_for(lambda l: l.get("type") == "message_start" and l["message"]["role"] == "user",
                           after=rpc.position(tool_end))
    assert steered["message"]["content"] == [{"type": "text", "text": "also say hello"}]
    assert rpc.position(tool_end) < rpc.position(steered)
    end = rpc.event("agent_end")
    assert [m["role"] for m in end["messages"]] == ["system", "user", "assistant", "toolResult", "user", "assistant"]
    second = server.requests[1].body["messages"]
    assert [m["role"] for m in second[-3:]] == ["assistant", "tool", "user"]
    assert "tool-done" in json.dumps(second[-2]) and user_texts(server.requests[1])[-1] == "also say hello"


def test_prompt_with_streaming_behavior_steer_is_queued_like_steer(rpc, server, gate):
    server.push(Reply(text="Running it.", tool_calls=[held_tool(gate)]), Reply(text="Done."))
    rpc.ok("prompt", message="run the slow command")
    rpc.event("tool_execution_start")
    rpc.ok("prompt", message="steered by prompt", streamingBehavior="steer")
    gate.open()
    rpc.event("agent_end")
    assert user_texts(server.requests[1])[-1] == "steered by prompt"


def test_a_follow_up_waits_until_the_agent_would_stop(rpc, server, gate):
    server.push(Reply(text="Running it.", tool_calls=[held_tool(gate)]), Reply(text="All done."),
                Reply(text="Following up."))
    rpc.ok("prompt", message="run the slow command")
    rpc.event("tool_execution_start")
    rpc.ok("follow_up", message="and then summarise")
    gate.open()
    end = rpc.event("agent_end")
    roles = [m["role"] for m in end["messages"]]
    assert roles == ["system", "user", "assistant", "toolResult", "assistant", "user", "assistant"]
    assert user_texts(server.requests[1]) == ["run the slow command"]
    assert user_texts(server.requests[2])[-1] == "and then summarise"


def test_steering_mode_all_delivers_every_queued_message_at_once(rpc, server, gate):
    server.push(Reply(text="Running.", tool_calls=[held_tool(gate)]), Reply(text="Both read."))
    rpc.ok("set_steering_mode", mode="all")
    rpc.ok("set_follow_up_mode", mode="all")
    assert rpc.ok("get_state")["steeringMode"] == "all"
    assert rpc.ok("get_state")["followUpMode"] == "all"
    rpc.ok("prompt", message="go")
    rpc.event("tool_execution_start")
    rpc.ok("steer", message="first note")
    rpc.ok("steer", message="second note")
    gate.open()
    rpc.event("agent_end")
    assert len(server.requests) == 2
    assert user_texts(server.requests[1])[-2:] == ["first note", "second note"]


def test_steering_mode_one_at_a_time_delivers_one_message_per_turn(rpc, server, gate):
    server.push(Reply(text="Running.", tool_calls=[held_tool(gate)]), Reply(text="Read one."),
                Reply(text="Read two."))
    rpc.ok("set_steering_mode", mode="one-at-a-time")
    rpc.ok("prompt", message="go")
    rpc.event("tool_execution_start")
    rpc.ok("steer", message="first note")
    rpc.ok("steer", message="second note")
    gate.open()
    rpc.event("agent_end")
    assert len(server.requests) == 3
    assert user_texts(server.requests[1])[-1] == "first note"
    assert user_texts(server.requests[2])[-1] == "second note"


def test_abort_mid_stream_keeps_the_partial_message_as_aborted(rpc, server):
    answer = "".join(f"word{n} " for n in range(300))
    server.push(Reply(text=answer, delta_size=6, delay=0.02))
    rpc.ok("prompt", message="talk")
    rpc.wait_for(lambda l: l.get("type") == "message_update"
                 and l["assistantMessageEvent"]["type"] == "text_delta")
    abort = rpc.send("abort")
    response = rpc.response_to(abort)
    assert response["success"] is True
    end = rpc.event("agent_end")
    assert rpc.position(end) < rpc.position(response), "abort answers once the agent is idle"
    message = [l for l in rpc.events("message_end") if l["message"]["role"] == "assistant"][-1]["message"]
    assert message["stopReason"] == "aborted"
    partial = message["content"][0]["text"]
    assert partial and answer.startswith(partial) and len(partial) < len(answer)
    assert rpc.ok("get_messages")["messages"][-1]["stopReason"] == "aborted"
    assert rpc.ok("get_state")["isStreaming"] is False
    assert server.wait_for_disconnect(), "the stream was cancelled"
    server.push(Reply(text="Fresh start."))
    rpc.ok("prompt", message="again")
    assert rpc.event("agent_end", after=rpc.position(end) + 1)["messages"][-1]["content"][0]["text"] == "Fresh start."


def test_queued_messages_expand_prompt_templates_like_prompts(start_rpc, server, pi, gate):
    prompts = pi.cwd / ".pi" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text("Review $1 carefully.\n")
    pi.trust_project()
    rpc = start_rpc()
    server.push(Reply(text="Running it.", tool_calls=[held_tool(gate)]), Reply(text="Reviewed."),
                Reply(text="Followed."))
    rpc.ok("prompt", message="/review setup.py")
    rpc.event("tool_execution_start")
    rpc.ok("steer", message="/review main.py")
    rpc.ok("follow_up", message="/review tests.py")
    gate.open()
    rpc.event("agent_end")
    assert user_texts(server.requests[0]) == ["Review setup.py carefully."]
    assert user_texts(server.requests[1])[-1] == "Review main.py carefully."
    assert user_texts(server.requests[2])[-1] == "Review tests.py carefully."


def test_bash_progress_updates_carry_details_as_pi_sends_them(rpc, server):
    """pi's bash tool sends ``{content: []}`` first, then the output so far with
    ``details`` (``{}`` while nothing is cut); clients read ``partialResult.details``."""
    server.push(Reply(tool_calls=[("bash", {"command": "echo progress"})]), Reply(text="Done."))
    mark = rpc.mark()
    rpc.ok("prompt", message="run it")
    rpc.event("agent_end", after=mark)
    updates = [e["partialResult"] for e in rpc.events("tool_execution_update", after=mark)]
    assert updates[0]["content"] == [] and "details" not in updates[0]
    with_output = [u for u in updates if u["content"]]
    assert with_output and all(u["details"] == {} for u in with_output), updates
    assert "progress" in with_output[-1]["content"][0]["text"]
