"""The WebSocket of a served session: pi's RPC protocol, one JSON object per frame,
fanned out to every attached client with a per-session ``seq`` and replay from ``since``."""

from __future__ import annotations

import json
import threading

import pytest

from support.llm_server import Reply

SLOW = dict(delta_size=4, delay=0.02)


def _seqs(frames):
    return [f["seq"] for f in frames if f.get("type") != "response"]


def test_every_event_carries_an_increasing_seq_and_responses_carry_none(served, server):
    server.push(Reply(text="Counted answer."))
    client = served.socket(served.open())
    response = client.request("prompt", message="count")
    assert response["success"] is True and "seq" not in response
    client.event("agent_end")
    seqs = _seqs(client.frames)
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))) and len(seqs) > 5


def test_two_clients_see_the_same_events_in_the_same_order(served, server):
    server.push(Reply(text="Shared answer for both. " * 4, **SLOW))
    session = served.open()
    first, second = served.socket(session), served.socket(session)
    first.ok("prompt", message="for both")
    first.event("agent_end"), second.event("agent_end")

    def up_to_agent_end(events: list) -> list:  # what follows it may not have reached both yet
        return events[:[e["type"] for e in events].index("agent_end") + 1]

    assert up_to_agent_end(first.events()) == up_to_agent_end(second.events())
    assert [e["type"] for e in first.events()][0] == "agent_start"


def test_a_response_goes_only_to_the_client_that_sent_the_command(served):
    session = served.open()
    first, second = served.socket(session), served.socket(session)
    state = first.ok("get_state")
    assert state["sessionId"] == session
    second.ok("get_state")  # by now any stray response to `first` would have arrived
    assert [f for f in second.frames if f.get("type") == "response"
            and f["id"].startswith(first._prefix)] == []


def test_a_steer_from_one_client_reaches_the_run_another_started(served, server):
    hold = threading.Event()
    server.push(Reply(text="Working on the first thing. " * 3, hold_after=3, hold=hold),
                Reply(text="Steered as asked."))
    session = served.open()
    starter, steerer = served.socket(session), served.socket(session)
    starter.ok("prompt", message="start the run")
    starter.event("message_update")
    steerer.ok("steer", message="change course")
    hold.set()
    starter.event("agent_end")
    users = [m for m in steerer.ok("get_messages")["messages"] if m["role"] == "user"]
    assert [u["content"][0]["text"] for u in users] == ["start the run", "change course"]
    texts = [m for m in starter.ok("get_messages")["messages"] if m["role"] == "assistant"]
    assert texts[-1]["content"][0]["text"] == "Steered as asked."
    assert len(server.requests) == 2  # the steer went into the same run, not a new one


def test_since_replays_exactly_the_held_events_after_it(served, server):
    hold = threading.Event()
    server.push(Reply(text="An answer that a reload must not lose. " * 3, hold_after=4, hold=hold))
    session = served.open()
    watcher = served.socket(session)
    watcher.ok("prompt", message="go")
    middle = watcher.event("message_update")
    hold.set()
    watcher.event("agent_settled")  # pi 1.6: the last event of a prompt
    late = served.socket(session, since=middle["seq"])
    end = late.event("agent_settled")
    expected = [e for e in watcher.events() if e["seq"] > middle["seq"]]
    assert late.events()[:len(expected)] == expected and end == expected[-1]
    everything = served.socket(session, since=0)
    everything.event("agent_settled")
    assert everything.events()[0]["type"] == "agent_start"  # the last run, from its start
    assert everything.events() == watcher.events()[watcher.events().index(everything.events()[0]):]


def test_without_since_only_live_events_arrive(served, server):
    server.push(Reply(text="Old run."), Reply(text="New run."))
    session = served.open()
    first = served.socket(session)
    first.ok("prompt", message="one")
    first.event("agent_end")
    fresh = served.socket(session)
    fresh.ok("prompt", message="two")
    fresh.event("agent_end")
    starts = [e for e in fresh.events() if e["type"] == "agent_start"]
    assert len(starts) == 1


def test_a_plugin_dialog_goes_to_every_client_and_the_first_answer_wins(confirm_plugin, served, server):
    server.push(Reply(tool_calls=[("bash", {"command": "echo allowed-by-second"})]), Reply(text="Done."))
    session = served.open()
    first, second = served.socket(session), served.socket(session)
    first.ok("prompt", message="run it")
    ask_first = first.event("extension_ui_request", method="confirm")
    ask_second = second.event("extension_ui_request", method="confirm")
    assert ask_first == ask_second and "seq" in ask_first
    second.connection.send('{"type": "extension_ui_response", "id": "%s", "confirmed": true}' % ask_first["id"])
    first.connection.send('{"type": "extension_ui_response", "id": "%s", "confirmed": false}' % ask_first["id"])
    end = first.event("tool_execution_end")
    assert end["isError"] is False and "allowed-by-second" in end["result"]["content"][0]["text"]


def test_bad_frames_get_pis_parse_error_and_the_socket_stays_open(served):
    client = served.socket(served.open())
    client.connection.send("not json")
    error = client.wait_for(lambda f: f.get("type") == "response")
    assert error["success"] is False and error["command"] == "parse"
    assert client.ok("get_state")["isStreaming"] is False


def test_closing_a_session_aborts_its_run_and_ends_its_sockets(served, server):
    hold = threading.Event()
    server.push(Reply(text="Never finished. " * 10, hold_after=2, hold=hold))
    session = served.open()
    client = served.socket(session)
    client.ok("prompt", message="long one")
    client.event("message_update")
    assert served.http.delete(f"/api/sessions/{session}").status_code == 204
    hold.set()
    with pytest.raises(AssertionError, match="closed"):
        client.wait_for(lambda f: False, timeout=5)
    assert session not in served.serving.sessions.live


def test_a_dialog_already_answered_is_not_replayed(confirm_plugin, served, server):
    hold = threading.Event()
    server.push(Reply(tool_calls=[("bash", {"command": "echo once"})]),
                Reply(text="After the answer.", hold_after=2, hold=hold))
    session = served.open()
    first = served.socket(session)
    first.ok("prompt", message="ask")
    ask = first.event("extension_ui_request", method="confirm")
    late = served.socket(session, since=0)
    assert late.event("extension_ui_request", method="confirm") == ask  # still waiting: replayed
    first.connection.send('{"type": "extension_ui_response", "id": "%s", "confirmed": true}' % ask["id"])
    first.event("tool_execution_end")
    after = served.socket(session, since=0)
    after.event("tool_execution_end")
    assert [f for f in after.events() if f["type"] == "extension_ui_request"] == []
    hold.set()
    after.event("agent_end")


def test_a_plugins_error_goes_only_to_the_session_whose_run_raised_it(pi, monkeypatch, request):
    folder = pi.cwd / ".pi" / "extensions"
    folder.mkdir(parents=True)
    (folder / "broken.py").write_text(
        "from pi_core import hookimpl\n\n@hookimpl\ndef turn_start(event, ctx):\n    raise RuntimeError('turn hook broke')\n")
    pi.trust_project()
    served = request.getfixturevalue("served")
    server = request.getfixturevalue("server")
    server.push(Reply(text="Despite the plugin."))
    failing, quiet = served.open(), served.open()
    watcher = served.socket(quiet)
    client = served.socket(failing)
    client.ok("prompt", message="go")
    error = client.event("extension_error")
    assert error["event"] == "turn_start" and "turn hook broke" in error["error"]
    client.event("agent_end")
    watcher.ok("get_state")
    assert [f for f in watcher.frames if f.get("type") == "extension_error"] == []


def test_a_client_too_far_behind_in_bytes_is_dropped_rather_than_holding_the_session():
    import asyncio

    from pi_plugins.serve.sessions import Client

    async def scenario() -> tuple[bool, int, int]:
        sent = []
        client = Client(lambda text: asyncio.sleep(0, sent.append(text)), limit=1000)
        pump = asyncio.create_task(client.pump())
        client.put("x" * 5000)  # one frame alone over the limit still goes to a client keeping up
        for _ in range(3):
            await asyncio.sleep(0)
        for _ in range(20):
            client.put("y" * 100)  # the eleventh unsent one, past 1000 bytes, drops it
        await asyncio.wait_for(client.behind.wait(), 1)
        await asyncio.wait_for(pump, 1)
        return client.dropped, client.queued, len(sent)

    dropped, queued, delivered = asyncio.run(scenario())
    assert dropped is True and queued == 0 and delivered == 1  # what it had unsent is let go


def test_a_long_run_lets_go_of_ended_messages_updates_first_and_keeps_every_other_event(served, server,
                                                                                        monkeypatch):
    """Two long answers in one run: past the limit the first answer's deltas go (its
    message_end holds it whole); every other frame, and the streaming answer's deltas, stay."""
    from pi_plugins.serve import sessions

    monkeypatch.setattr(sessions, "HELD_BYTES", 75_000)  # the system message's frames hold ~20 KB
    words = "A long answer that outgrows the buffer. " * 20
    server.push(Reply(text=words, delta_size=8, tool_calls=[("bash", {"command": "echo between"})]),
                Reply(text=words, delta_size=8))
    session = served.open()
    live = served.socket(session)
    live.ok("prompt", message="talk a lot")
    live.event("agent_settled")
    replay = served.socket(session, since=0)
    replay.event("agent_settled")
    held = replay.events()
    def size(frames):  # as the server writes them: compact JSON
        return sum(len(json.dumps(f, separators=(",", ":"), ensure_ascii=False)) for f in frames)

    assert size(live.events()) > 75_000  # the run did outgrow the limit
    assert size(held) < 75_000
    others = [f for f in live.events() if f["type"] != "message_update"]
    assert [f for f in held if f["type"] != "message_update"] == others  # every other event kept
    updates = [f["seq"] for f in held if f["type"] == "message_update"]
    all_updates = [f["seq"] for f in live.events() if f["type"] == "message_update"]
    assert updates == all_updates[-len(updates):]  # the oldest went
    ends = [f["seq"] for f in live.events() if f["type"] == "message_end" and f["message"]["role"] == "assistant"]
    assert [u for u in all_updates if u > ends[0]] == [u for u in updates if u > ends[0]]  # the last answer whole


def test_seq_of_a_session_opened_again_is_above_every_seq_it_had_before(served, server):
    server.push(Reply(text="Before."))
    session = served.open()
    first = served.socket(session)
    first.ok("prompt", message="one")
    last_before = first.event("agent_end")["seq"]
    served.http.delete(f"/api/sessions/{session}")
    served.http.post("/api/sessions", json={"session": session})
    again = served.socket(session, since=last_before)  # a client that knew the old numbers
    again.ok("set_session_name", name="renamed")
    assert again.event("session_info_changed")["seq"] > last_before


@pytest.mark.parametrize("approve", [None, True], ids=["no-decision", "approve"])
def test_an_untrusted_projects_plugins_load_only_with_approve(confirm_plugin_file, server, serve_with, capfd,
                                                              approve):
    """pi serve cannot ask: without a decision a project's .pi/extensions do not load and
    one line on stderr names --approve; ``-a`` (approve) loads them."""
    served = serve_with(approve=approve)
    server.push(Reply(tool_calls=[("bash", {"command": "echo ran"})]), Reply(text="Done."))
    client = served.socket(served.open())
    client.ok("prompt", message="run it")
    if approve:
        asked = client.event("extension_ui_request", method="confirm")
        client.connection.send('{"type": "extension_ui_response", "id": "%s", "confirmed": true}' % asked["id"])
    end = client.event("tool_execution_end")
    assert "ran" in end["result"]["content"][0]["text"]
    asks = [f for f in client.events() if f.get("type") == "extension_ui_request" and f.get("method") == "confirm"]
    assert len(asks) == (1 if approve else 0)
    said = capfd.readouterr().err
    assert ("--approve" in said) == (approve is None)


def test_navigate_tree_refuses_what_is_not_an_entry_and_moves_nothing(served, server):
    """The page's navigate_tree: a bad request is a failed response that says why."""
    server.push(Reply(text="An answer."))
    client = served.socket(served.open())
    client.ok("prompt", message="a prompt")
    client.event("agent_end")
    leaf = client.ok("get_tree")["leafId"]
    for fields, error in [({}, "entryId must be an entry's id"),
                          ({"entryId": "nope"}, "Entry not found: nope"),
                          ({"entryId": leaf, "summarize": "yes"}, "summarize must be true or false"),
                          ({"entryId": leaf, "instructions": 3}, "instructions must be a string"),
                          ({"entryId": leaf, "restoreFiles": "yes"}, "restoreFiles must be true or false")]:
        response = client.request("navigate_tree", **fields)
        assert (response["success"], response["error"]) == (False, error)
    assert client.ok("get_tree")["leafId"] == leaf


def test_labels_and_restore_plans_refuse_bad_requests_and_change_nothing(served, server):
    """set_label and plan_restore, the page's: a bad request is a failed response that
    says why; outside a git work tree (no checkpoints) a plan is empty, as the chat asks
    nothing there."""
    server.push(Reply(text="An answer."))
    client = served.socket(served.open())
    client.ok("prompt", message="a prompt")
    client.event("agent_end")
    tree = client.ok("get_tree")
    for command, fields, error in [
            ("set_label", {}, "entryId must be an entry's id"),
            ("set_label", {"entryId": "nope", "label": "x"}, "Entry not found: nope"),
            ("set_label", {"entryId": tree["leafId"], "label": 3}, "label must be a string, or null to clear it"),
            ("plan_restore", {}, "entryId must be an entry's id")]:
        response = client.request(command, **fields)
        assert (response["success"], response["error"]) == (False, error)
    assert client.ok("get_tree") == tree
    assert client.ok("plan_restore", entryId=tree["leafId"]) == {"files": []}
    assert tree["filterMode"] == "default"


def test_navigate_tree_to_a_prompt_goes_to_its_parent_and_gives_its_text_back(served, server):
    server.push(Reply(text="First answer."), Reply(text="Second answer."))
    session = served.open()
    client, other = served.socket(session), served.socket(session)
    client.ok("prompt", message="first")
    client.event("agent_end")
    client.ok("prompt", message="second")
    client.event("agent_end", after=len(client.frames) - 1)
    entries = client.ok("get_entries")["entries"]
    second = next(e for e in entries if e["type"] == "message" and e["message"]["role"] == "user"
                  and e["message"]["content"][0]["text"] == "second")
    moved = client.ok("navigate_tree", entryId=second["id"])
    assert moved == {"cancelled": False, "leafId": second["parentId"], "editorText": "second"}
    other.event("tree_navigated", leafId=second["parentId"])
    texts = [m["content"][0]["text"] for m in other.ok("get_messages")["messages"] if m["role"] != "system"]
    assert texts == ["first", "First answer."]
