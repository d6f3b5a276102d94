"""What pi 1.6 added to the RPC protocol, on the wire: the session's entries and tree,
the thinking levels, clearing the queues, bash kept out of the context, and the plugin
hooks it added (headers, dialogs, the settled run, the mode)."""

import json
import textwrap
import threading

from support.llm_server import Reply
from support.rpc import write_models

PLUGIN = textwrap.dedent('''
    import json, os
    from pi_core import hookimpl

    def note(line):
        with open(os.environ["PI16_NOTES"], "a") as f:
            f.write(json.dumps(line) + "\\n")

    @hookimpl
    def before_provider_headers(headers, model, ctx):
        return {**headers, "X-Trace": f"{ctx.mode}:{model.id}", "Authorization": None}

    @hookimpl
    def agent_settled(event, ctx):
        note({"settled": event.aborted})

    @hookimpl
    def session_info_changed(event, ctx):
        note({"name": event.name})

    @hookimpl
    def ui_prompt_start(event, ctx):
        note({"ui_prompt_start": [event.kind, event.title]})

    @hookimpl
    def ui_prompt_end(event, ctx):
        note({"ui_prompt_end": True})

    @hookimpl
    async def before_tool_call(event, ctx):
        await ctx.ui.confirm("Run it?", event.arguments.get("command", ""))
''')


def notes(path) -> list:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_get_entries_and_get_tree_give_the_file_as_pi16_does(rpc, server):
    server.push(Reply(text="First."), Reply(text="Second."))
    rpc.ok("prompt", message="one")
    rpc.event("agent_settled")
    rpc.ok("prompt", message="two")
    rpc.event("agent_settled", after=rpc.position(rpc.event("agent_settled")) + 1)
    got = rpc.ok("get_entries")
    kinds = [e["type"] if e["type"] != "message" else e["message"]["role"] for e in got["entries"]]
    assert kinds == ["model_change", "thinking_level_change", "system", "user", "assistant", "user", "assistant"]
    assert got["leafId"] == got["entries"][-1]["id"]
    third = got["entries"][3]["id"]
    assert [e["id"] for e in rpc.ok("get_entries", since=third)["entries"]] == [
        e["id"] for e in got["entries"][4:]]
    missing = rpc.request("get_entries", since="nope1234")
    assert missing["success"] is False and missing["error"] == "Entry not found: nope1234"
    tree = rpc.ok("get_tree")
    assert len(tree["tree"]) == 1 and tree["leafId"] == got["leafId"]
    node, depth = tree["tree"][0], 1
    while node["children"]:
        (node,) = node["children"]
        depth += 1
    assert depth == 7 and node["entry"]["id"] == got["leafId"]


def test_thinking_levels_include_max_only_where_the_model_names_it(start_rpc, pi):
    write_models(pi, {"id": "thinker", "reasoning": True},
                 {"id": "deep", "reasoning": True, "thinkingLevelMap": {"xhigh": "xhigh", "max": "max"}},
                 {"id": "plain"})
    rpc = start_rpc("--model", "local/thinker")
    assert rpc.ok("get_available_thinking_levels") == {"levels": ["off", "minimal", "low", "medium", "high"]}
    rpc.ok("set_thinking_level", level="max")  # clamped, as pi 1.6 clamps it
    assert rpc.ok("get_state")["thinkingLevel"] == "high"
    rpc.ok("set_model", provider="local", modelId="deep")
    assert rpc.ok("get_available_thinking_levels")["levels"][-2:] == ["xhigh", "max"]
    rpc.ok("set_thinking_level", level="max")
    assert rpc.ok("get_state")["thinkingLevel"] == "max"
    rpc.ok("set_model", provider="local", modelId="plain")
    assert rpc.ok("get_available_thinking_levels") == {"levels": ["off"]}


def test_clear_queue_gives_back_the_queued_texts_and_empties_the_queues(rpc, server):
    streaming = threading.Event()
    server.push(Reply(text="slow " * 50, delta_size=5, hold=streaming), Reply(text="unused"))
    rpc.ok("prompt", message="go")
    rpc.event("message_update")
    assert rpc.ok("steer", message="turn left") == {"disposition": "queued"}
    assert rpc.ok("follow_up", message="then stop") == {"disposition": "queued"}
    assert rpc.ok("prompt", message="and more", streamingBehavior="followUp") == {"disposition": "queued"}
    assert rpc.ok("clear_queue") == {"steering": ["turn left"], "followUp": ["then stop", "and more"]}
    assert rpc.ok("clear_queue") == {"steering": [], "followUp": []}
    streaming.set()
    rpc.event("agent_settled")
    assert len(server.requests) == 1  # nothing queued was sent


def test_bash_exclude_from_context_is_kept_but_not_sent(rpc, server):
    server.push(Reply(text="ok"))
    assert rpc.ok("bash", command="echo secret-output", excludeFromContext=True)["output"] == "secret-output\n"
    rpc.ok("bash", command="echo visible-output")
    rpc.ok("prompt", message="what ran?")
    rpc.event("agent_settled")
    sent = json.dumps(server.requests[0].body)
    assert "visible-output" in sent and "secret-output" not in sent
    bash = [m for m in rpc.ok("get_messages")["messages"] if m["role"] == "bashExecution"]
    assert [m.get("excludeFromContext") for m in bash] == [True, None]


def test_plugins_hear_pi16s_new_hooks(start_rpc, server, pi, monkeypatch, tmp_path):
    plugin = pi.cwd / "pi16_hooks.py"
    plugin.write_text(PLUGIN)
    monkeypatch.setenv("PI16_NOTES", str(tmp_path / "notes.jsonl"))
    rpc = start_rpc("-e", str(plugin))
    server.push(Reply(text="Running.", tool_calls=[("bash", {"command": "echo hi"})]), Reply(text="Done."))
    rpc.ok("prompt", message="run")
    ask = rpc.event("extension_ui_request", method="confirm")
    rpc.answer_ui(ask, confirmed=True)
    rpc.event("agent_settled")
    rpc.ok("set_session_name", name="Named")
    assert rpc.event("session_info_changed") == {"type": "session_info_changed", "name": "Named"}
    headers = {k.lower(): v for k, v in server.requests[0].headers.items()}
    assert headers["x-trace"] == "rpc:test-model" and "authorization" not in headers
    assert notes(tmp_path / "notes.jsonl") == [
        {"ui_prompt_start": ["confirm", "Run it?"]}, {"ui_prompt_end": True},
        {"settled": False}, {"name": "Named"}]


def test_an_answer_carries_pi16s_duration_and_thinking_level(rpc, server):
    server.push(Reply(text="ok"))
    rpc.ok("prompt", message="hi")
    rpc.event("agent_settled")
    (end,) = [e for e in rpc.events("message_end") if e["message"]["role"] == "assistant"]
    answer = rpc.ok("get_messages")["messages"][-1]
    assert answer["thinkingLevel"] == rpc.ok("get_state")["thinkingLevel"]
    assert isinstance(answer["durationMs"], int) and answer["durationMs"] >= 0
    assert end["message"]["durationMs"] == answer["durationMs"]


def test_a_tool_result_carries_how_long_the_tool_ran_and_a_refused_call_none(rpc, server):
    server.push(Reply(tool_calls=[("bash", {"command": "sleep 0.3"}), ("no_such_tool", {})]), Reply(text="Done."))
    rpc.ok("prompt", message="wait")
    rpc.event("agent_settled")
    ends = {e["toolName"]: e for e in rpc.events("tool_execution_end")}
    results = {m["toolName"]: m for m in rpc.ok("get_messages")["messages"] if m["role"] == "toolResult"}
    assert 300 <= ends["bash"]["durationMs"] < 10_000 and results["bash"]["durationMs"] == ends["bash"]["durationMs"]
    assert list(results["bash"])[-2:] == ["durationMs", "timestamp"]  # where pi 1.6 writes it
    assert "durationMs" not in ends["no_such_tool"] and "durationMs" not in results["no_such_tool"]


def test_agent_end_says_whether_the_failed_request_is_sent_again(start_rpc, server, pi):
    from support.rpc import write_settings

    write_settings(pi, retry={"baseDelayMs": 1, "maxRetries": 1, "provider": {"maxRetries": 0}})
    rpc = start_rpc()
    server.push(Reply(status=500, error="boom"), Reply(status=500, error="boom again"))
    server.default = Reply(text="unused")
    rpc.ok("prompt", message="hi")
    settled = rpc.event("agent_settled")
    ends = [e["willRetry"] for e in rpc.events("agent_end")]
    assert ends == [True, False]  # one retry allowed: the second failure is the last
    assert settled == {"type": "agent_settled", "aborted": False}
    assert rpc.position(rpc.events("agent_end")[-1]) < rpc.position(settled)
