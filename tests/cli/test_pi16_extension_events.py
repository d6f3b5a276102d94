"""pi 1.6's ``provider_stream_event``, ``agent_before_settle``, ``input``'s
``streamingBehavior`` and ``session_compact_failed``, side by side: the real pi 1.6 runs a TypeScript extension and ours
its Python twin (tests/fixtures/pi16_extension_events), against the same scripted server;
each hears the same wire events, sends the same one extra request with the same reminder
and writes the same entries, and hears the same behaviour for prompts sent mid-run."""

import json
import subprocess
from pathlib import Path

import pytest

from support.llm_server import Reply

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]

FIXTURES = Path(__file__).parents[1] / "fixtures" / "pi16_extension_events"


def _run_both(pi, server, tmp_path):
    from support.programs import node_for, require_real

    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    runs = {}
    for who, command in (("pi16", [node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js"),
                                   "-e", str(FIXTURES / "events.ts")]),
                         ("ours", [*pi.command()[:3], "-e", str(FIXTURES / "events.py")])):
        log = tmp_path / f"{who}-stream.jsonl"
        first = len(server.requests)
        server.push(Reply(text="Fixed it.", delta_size=4, response_id="chatcmpl-1"),
                    Reply(text="Reviewed.", response_id="chatcmpl-2"))
        before = set(pi.sessions())
        done = subprocess.run([*command, *pi.flags("--mode", "json", "-p", "fix the bug")], cwd=pi.cwd,
                              env={**pi.env, "PI_OFFLINE": "1", "STREAM_LOG": str(log)},
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        [session] = set(pi.sessions()) - before
        entries = [json.loads(line) for line in session.read_text().splitlines()]
        heard = [json.loads(line) for line in log.read_text().splitlines()]
        runs[who] = (server.requests[first:], entries, heard)
    return runs


def test_pi16_and_ours_hear_the_same_stream_events_and_settle_after_the_same_one_continuation(
        pi, server, tmp_path):
    runs = _run_both(pi, server, tmp_path)
    (their_requests, their_entries, their_heard) = runs["pi16"]
    (our_requests, our_entries, our_heard) = runs["ours"]

    # provider_stream_event: the same parsed chunks, with the same provider, api and model
    assert our_heard == their_heard
    assert {(e["provider"], e["api"], e["model"]) for e in _heard(our_heard)} == {
        ("local", "openai-completions", "test-model")}

    # agent_before_settle: one more request, ending with the reminder as a user message
    assert len(our_requests) == len(their_requests) == 2
    their_last, our_last = their_requests[1].body["messages"][-1], our_requests[1].body["messages"][-1]
    assert our_last["role"] == their_last["role"] == "user"
    assert _text(our_last) == _text(their_last) == "Review the diff before replying."

    def shape(entries):  # (pi 1.6's session ``system`` messages are their own row, not here yet)
        return [(e["type"], e.get("customType"), e.get("message", {}).get("role"), e.get("display"))
                for e in entries if e["type"] in ("message", "custom_message", "custom")
                and e.get("message", {}).get("role") != "system"]

    assert shape(our_entries) == shape(their_entries)


def _heard(heard):
    assert heard, "no provider_stream_event was heard"
    return heard


def _text(message):
    content = message["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def test_input_hears_the_streaming_behaviour_of_rpc_prompts_as_pi16_does(pi, server, tmp_path):
    from support.programs import node_for, require_real
    from support.rpc import RpcClient

    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    heard = {}
    for who, command in (("pi16", [node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js"),
                                   "-e", str(FIXTURES / "inputs.ts")]),
                         ("ours", [*pi.command()[:3], "-e", str(FIXTURES / "inputs.py")])):
        log = tmp_path / f"{who}-inputs.jsonl"
        server.push(Reply(text="a slow first answer", delta_size=1, delay=0.05), Reply(text="steered"),
                    Reply(text="followed"))
        env = {**pi.env, "PI_OFFLINE": "1", "INPUT_LOG": str(log)}
        process = subprocess.Popen([*command, *pi.flags("--mode", "rpc")], cwd=pi.cwd, env=env,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        rpc = RpcClient(process, timeout=60)
        try:
            rpc.ok("prompt", message="start")
            rpc.event("message_update")
            rpc.ok("prompt", message="now", streamingBehavior="steer")
            rpc.ok("prompt", message="later", streamingBehavior="followUp")
            rpc.event("agent_settled")
        finally:
            rpc.close()
        heard[who] = [json.loads(line) for line in log.read_text().splitlines()]
    assert heard["ours"] == heard["pi16"] == [
        {"text": "start", "source": "rpc", "streamingBehavior": None},
        {"text": "now", "source": "rpc", "streamingBehavior": "steer"},
        {"text": "later", "source": "rpc", "streamingBehavior": "followUp"}]


def test_a_compaction_a_plugin_cancels_reaches_session_compact_failed_as_in_pi16(pi, server, tmp_path):
    from support.programs import node_for, require_real
    from support.rpc import RpcClient

    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    (pi.agent_dir / "settings.json").write_text(json.dumps({"compaction": {"keepRecentTokens": 10}}))
    heard, answers = {}, {}
    for who, command in (("pi16", [node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js"),
                                   "-e", str(FIXTURES / "compact.ts")]),
                         ("ours", [*pi.command()[:3], "-e", str(FIXTURES / "compact.py")])):
        log = tmp_path / f"{who}-compact.jsonl"
        server.push(Reply(text="Hello. " * 50), Reply(text="Again. " * 50))
        env = {**pi.env, "PI_OFFLINE": "1", "COMPACT_LOG": str(log)}
        process = subprocess.Popen([*command, *pi.flags("--mode", "rpc")], cwd=pi.cwd, env=env,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        rpc = RpcClient(process, timeout=60)
        try:
            for text in ("hi", "and again"):  # enough that pi 1.6 has a cut to make
                mark = rpc.mark()
                rpc.ok("prompt", message=text)
                rpc.event("agent_settled", after=mark)
            answers[who] = rpc.request("compact")
        finally:
            rpc.close()
        heard[who] = [json.loads(line) for line in log.read_text().splitlines()]
    assert answers["ours"]["success"] is answers["pi16"]["success"] is False
    assert heard["ours"] == heard["pi16"] == [
        {"reason": "manual", "errorMessage": None, "aborted": True, "willRetry": False, "fromExtension": False}]


def test_a_message_sent_from_agent_settled_with_trigger_turn_runs_through_before_agent_start_as_in_pi16(
        pi, server, tmp_path):
    from support.programs import node_for, require_real
    from support.rpc import RpcClient

    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    heard, sent = {}, {}
    for who, command in (("pi16", [node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js"),
                                   "-e", str(FIXTURES / "trigger.ts")]),
                         ("ours", [*pi.command()[:3], "-e", str(FIXTURES / "trigger.py")])):
        log = tmp_path / f"{who}-trigger.jsonl"
        first = len(server.requests)
        server.push(Reply(text="Hello."), Reply(text="Good news."))
        env = {**pi.env, "PI_OFFLINE": "1", "TRIGGER_LOG": str(log)}
        process = subprocess.Popen([*command, *pi.flags("--mode", "rpc")], cwd=pi.cwd, env=env,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        rpc = RpcClient(process, timeout=60)
        try:
            rpc.ok("prompt", message="hi")
            second = rpc.position(rpc.event("agent_settled")) + 1
            rpc.event("agent_settled", after=second)
        finally:
            rpc.close()
        heard[who] = [json.loads(line) for line in log.read_text().splitlines()]
        sent[who] = [_text(r.body["messages"][-1]) for r in server.requests[first:]]
    assert heard["ours"] == heard["pi16"] == [{"start": "hi"}, {"settled": True}, {"start": "ping"},
                                              {"settled": True}]
    assert sent["ours"] == sent["pi16"] == ["hi", "The build passed."]


def _settle_both(pi, server, tmp_path, *handlers: str, requests: int = 2):
    """Run pi 1.6 and ours with the agent_before_settle fixtures named: the requests each
    sent, what each handler saw (event.context included) and what each printed."""
    from support.programs import node_for, require_real

    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    runs = {}
    for who, command, ext in (("pi16", [node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js")], "ts"),
                              ("ours", [*pi.command()[:3]], "py")):
        log = tmp_path / f"{who}-settle.jsonl"
        log.touch()
        first = len(server.requests)
        server.push(*[Reply(text="Fixed it."), Reply(text="Tests checked.")][:requests])
        extensions = [arg for name in handlers for arg in ("-e", str(FIXTURES / f"settle_{name}.{ext}"))]
        done = subprocess.run([*command, *extensions, *pi.flags("--mode", "json", "-p", "fix the bug")],
                              cwd=pi.cwd, env={**pi.env, "PI_OFFLINE": "1", "SETTLE_LOG": str(log)},
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        seen = [json.loads(line) for line in log.read_text().splitlines()]
        runs[who] = (server.requests[first:], seen, done.stdout + done.stderr)
    return runs


def test_before_settle_handlers_see_the_context_rebuilt_from_the_entries_proposed_before_them_as_in_pi16(
        pi, server, tmp_path):
    runs = _settle_both(pi, server, tmp_path, "draft", "continue")
    (their_requests, their_seen, _), (our_requests, our_seen, _) = runs["pi16"], runs["ours"]
    assert our_seen == their_seen
    assert their_seen[:2] == [
        {"who": "draft", "outcome": "completed", "entries": 0, "continue": False, "canContinue": False,
         "pending": 0, "llmRoles": ["user", "assistant"], "last": "Fixed it.",
         "contextRoles": ["user", "assistant"]},
        {"who": "continue", "outcome": "completed", "entries": 1, "continue": False, "canContinue": True,
         "pending": 0, "llmRoles": ["user", "assistant", "user"], "last": "Check the tests too.",
         "contextRoles": ["user", "assistant", "custom"]}]
    assert len(our_requests) == len(their_requests) == 2
    assert _text(our_requests[1].body["messages"][-1]) == _text(their_requests[1].body["messages"][-1]) == (
        "Check the tests too.")


def test_continue_with_nothing_after_the_models_answer_is_reported_and_settles_as_in_pi16(pi, server, tmp_path):
    runs = _settle_both(pi, server, tmp_path, "continue", requests=1)
    (their_requests, their_seen, their_output), (our_requests, our_seen, our_output) = runs["pi16"], runs["ours"]
    assert our_seen == their_seen
    assert their_seen[0]["canContinue"] is False
    assert len(our_requests) == len(their_requests) == 1
    reason = "agent_before_settle requested continuation without runnable model context"
    assert reason in their_output and reason in our_output
