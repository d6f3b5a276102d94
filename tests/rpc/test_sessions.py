"""Session commands: new, switch, fork, clone, names, stats, the last answer, compaction
and HTML export."""

import importlib.util
import json
from pathlib import Path

from support.llm_server import Reply
from support.rpc import write_settings


def exchange(rpc, server, prompt: str, answer: str, **reply) -> dict:
    """One prompt answered; returns its agent_end."""
    server.push(Reply(text=answer, **reply))
    mark = rpc.mark()
    rpc.ok("prompt", message=prompt)
    return rpc.event("agent_end", after=mark)


def entries(path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def test_new_session_and_switch_session_move_between_files(rpc, server):
    exchange(rpc, server, "remember 42", "I will remember 42.")
    first = rpc.ok("get_state")["sessionFile"]

    assert rpc.ok("new_session", parentSession=first) == {"cancelled": False}
    state = rpc.ok("get_state")
    assert state["messageCount"] == 0 and state["sessionFile"] != first
    assert rpc.ok("get_messages") == {"messages": []}
    exchange(rpc, server, "fresh start", "Hello again.")
    second = rpc.ok("get_state")["sessionFile"]
    assert entries(second)[0]["parentSession"] == first
    assert "remember 42" not in json.dumps(server.requests[-1].body)

    assert rpc.ok("switch_session", sessionPath=first) == {"cancelled": False}
    assert rpc.ok("get_state")["sessionFile"] == first
    assert [m["role"] for m in rpc.ok("get_messages")["messages"]] == ["system", "user", "assistant"]
    exchange(rpc, server, "what number?", "42.")
    assert "I will remember 42." in json.dumps(server.requests[-1].body)

    missing = rpc.request("switch_session", sessionPath="/nowhere/none.jsonl")
    assert missing["success"] is False and "Session file not found" in missing["error"]


def test_session_changes_wait_for_the_running_prompt(rpc, server):
    server.push(Reply(text="slow " * 60, delta_size=5, delay=0.02))
    rpc.ok("prompt", message="talk")
    rpc.event("message_update")
    busy = rpc.request("new_session")
    assert busy["success"] is False and "wait for the agent" in busy["error"]
    rpc.ok("abort")
    assert rpc.ok("new_session") == {"cancelled": False}


def test_fork_starts_a_new_session_before_a_user_message(rpc, server):
    exchange(rpc, server, "first question", "First answer.")
    exchange(rpc, server, "second question", "Second answer.")
    original = rpc.ok("get_state")["sessionFile"]
    forks = rpc.ok("get_fork_messages")["messages"]
    assert [f["text"] for f in forks] == ["first question", "second question"]
    assert all(len(f["entryId"]) == 8 for f in forks)

    assert rpc.ok("fork", entryId=forks[1]["entryId"]) == {"text": "second question", "cancelled": False}
    state = rpc.ok("get_state")
    assert state["sessionFile"] != original
    assert [m["role"] for m in rpc.ok("get_messages")["messages"]] == ["system", "user", "assistant"]
    exchange(rpc, server, "another second question", "Another answer.")
    sent = json.dumps(server.requests[-1].body)
    assert "First answer." in sent and "Second answer." not in sent
    assert "Second answer." in json.dumps(entries(original)), "the original session is intact"

    bad = rpc.request("fork", entryId="nothere")
    assert bad["success"] is False and "not a user message" in bad["error"]


def test_clone_copies_the_branch_into_a_new_session(rpc, server):
    exchange(rpc, server, "question", "Answer.")
    original = rpc.ok("get_state")["sessionFile"]
    assert rpc.ok("clone") == {"cancelled": False}
    state = rpc.ok("get_state")
    assert state["sessionFile"] != original and state["messageCount"] == 3
    assert [m["content"] for m in rpc.ok("get_messages")["messages"]][2] == [{"type": "text", "text": "Answer."}]


def test_set_session_name_names_the_session(rpc, server):
    exchange(rpc, server, "hello", "Hi.")
    rpc.ok("set_session_name", name="  feature work  ")
    assert rpc.event("session_info_changed") == {"type": "session_info_changed", "name": "feature work"}
    state = rpc.ok("get_state")
    assert state["sessionName"] == "feature work"
    assert entries(state["sessionFile"])[-1]["type"] == "session_info"
    assert entries(state["sessionFile"])[-1]["name"] == "feature work"
    empty = rpc.request("set_session_name", name="   ")
    assert empty["success"] is False and empty["error"] == "Session name cannot be empty"


def test_get_session_stats_and_get_last_assistant_text(rpc, server):
    assert rpc.ok("get_last_assistant_text") == {"text": None}
    server.push(Reply(text="Looking.", tool_calls=[("bash", {"command": "echo hi"})],
                      usage={"input": 100, "output": 20}),
                Reply(text="  It printed hi.  ", usage={"input": 150, "output": 10, "cache_read": 50}))
    rpc.ok("prompt", message="run echo")
    rpc.event("agent_end")
    stats = rpc.ok("get_session_stats")
    state = rpc.ok("get_state")
    assert stats["sessionFile"] == state["sessionFile"] and stats["sessionId"] == state["sessionId"]
    assert {k: stats[k] for k in ("userMessages", "assistantMessages", "toolCalls", "toolResults",
                                  "totalMessages")} == {
        "userMessages": 1, "assistantMessages": 2, "toolCalls": 1, "toolResults": 1, "totalMessages": 5}
    assert stats["tokens"] == {"input": 250, "output": 30, "cacheRead": 50, "cacheWrite": 0, "total": 330}
    assert stats["cost"] == 0
    assert stats["contextUsage"]["contextWindow"] == 128000 and stats["contextUsage"]["tokens"] > 0
    assert rpc.ok("get_last_assistant_text") == {"text": "It printed hi."}


def test_compact_summarises_the_branch(start_rpc, server, pi):
    write_settings(pi, compaction={"keepRecentTokens": 5})
    rpc = start_rpc()
    exchange(rpc, server, "first " * 50, "First answer. " * 20)
    exchange(rpc, server, "second " * 50, "Second answer. " * 20)
    server.push(Reply(status=400, error="the summary request was refused"))
    failed = rpc.request("compact")
    assert failed["success"] is False and failed["error"].startswith("Compaction failed:")
    assert "the summary request was refused" in failed["error"]
    server.default = Reply(text="## Goal\nThe summary of it all.")  # one request, or two for a split turn
    mark, before = rpc.mark(), len(server.requests)
    result = rpc.ok("compact", customInstructions="focus on answers")
    assert "The summary of it all." in result["summary"]
    assert result["tokensBefore"] > 0 and len(result["firstKeptEntryId"]) == 8
    assert rpc.event("compaction_start", after=mark) == {"type": "compaction_start", "reason": "manual"}
    end = rpc.event("compaction_end", after=mark)
    assert end["reason"] == "manual" and end["aborted"] is False and end["willRetry"] is False
    assert end["result"]["summary"] == result["summary"]
    assert any("focus on answers" in json.dumps(r.body) for r in server.requests[before:])
    # pi 1.6: the compaction's system message (the prompt, never summarised) leads, then the summary
    assert [m["role"] for m in rpc.ok("get_messages")["messages"]][:2] == ["system", "compactionSummary"]
    session_file = rpc.ok("get_state")["sessionFile"]
    assert entries(session_file)[-1]["type"] == "compaction"


def test_compact_summarises_a_session_shorter_than_keep_recent_tokens(rpc, server):
    """As pi 0.73: a short branch compacts too (a summary of what came before the kept
    part, here nothing, and every message kept after it)."""
    exchange(rpc, server, "hello", "Hi there.")
    server.default = Reply(text="## Goal\nA short summary.")
    result = rpc.ok("compact")
    assert "A short summary." in result["summary"]
    messages = rpc.ok("get_messages")["messages"]
    assert [m["role"] for m in messages] == ["system", "compactionSummary", "user", "assistant"]  # as pi 1.6
    assert entries(rpc.ok("get_state")["sessionFile"])[-1]["type"] == "compaction"
    again = rpc.request("compact")
    assert again["success"] is False and "Already compacted" in again["error"]


def test_export_html_writes_the_page_or_says_why_it_cannot(rpc, server, pi):
    exchange(rpc, server, "hello", "Hi there.")
    response = rpc.request("export_html", outputPath="page.html")
    if importlib.util.find_spec("pi_plugins.export_html") is None:
        assert response["success"] is False
        assert response["error"].startswith("HTML export is not available")
    else:
        assert response["success"] is True
        page = Path(response["data"]["path"])
        assert page == pi.cwd / "page.html" and "Hi there." in page.read_text()
    assert rpc.ok("get_state")["messageCount"] == 3, "the process goes on serving"
