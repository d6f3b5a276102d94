"""pi 1.6's ``nestedCalls``: the calls a codemode script made are recorded on its tool
result in the session (name, arguments, status, duration, error; never results), within
1.6's bounds, read by compaction's file lists and shown in HTML exports."""

from __future__ import annotations

import asyncio
import json

import pytest
from support.codemode_scripts import run_scripts

from pi_core import tool
from pi_plugins.compaction.plan import FileOps
from pi_plugins.export_html.entries import _render_message

pytestmark = pytest.mark.process


def stored_results(make) -> list[dict]:
    session_file = next(make.sessions.glob("*.jsonl"))
    entries = [json.loads(line) for line in session_file.read_text().splitlines()]
    return [e["message"] for e in entries if e.get("type") == "message" and e["message"]["role"] == "toolResult"]


def test_a_scripts_calls_are_recorded_on_its_result_in_the_session(tmp_path):
    found, make = asyncio.run(run_scripts(
        tmp_path, "await tools.echo({word: 'one'});\nawait tools.echo({}).catch(() => null);\n"
                  "await tools.nope({}).catch(() => null); return 'ok'"))
    (stored,) = stored_results(make)
    record = stored["nestedCalls"]
    parent = stored["toolCallId"]
    assert record["complete"] is True
    assert [(c["id"], c["name"], c["status"]) for c in record["calls"]] == [
        (f"{parent}/1", "echo", "ok"), (f"{parent}/2", "echo", "error")]
    first, second = record["calls"]
    assert first["arguments"] == {"word": "one"} and "error" not in first and isinstance(first["durationMs"], int)
    assert second["arguments"] == {} and second["error"].startswith('Validation failed for tool "echo"')
    assert "echo one" not in json.dumps(record)  # results are never kept
    assert found[0].nested_calls == record  # the message the run holds carries it too


def test_a_result_without_nested_calls_has_no_record(tmp_path):
    _, make = asyncio.run(run_scripts(tmp_path, "return 1"))
    (stored,) = stored_results(make)
    assert "nestedCalls" not in stored


def test_the_record_keeps_256_calls_and_omits_large_arguments_and_says_it_lost_them(tmp_path):
    script = ("await tools.echo({word: 'x'.repeat(9000)});\n"
              "for (let i = 0; i < 300; i++) await tools.echo({word: String(i)});\nreturn 'ok'")
    _, make = asyncio.run(run_scripts(tmp_path, script))
    (stored,) = stored_results(make)
    record = stored["nestedCalls"]
    assert record["complete"] is False and len(record["calls"]) == 256
    big = record["calls"][0]
    assert "arguments" not in big and big["argumentsBytes"] == len(json.dumps({"word": "x" * 9000}).replace(" ", ""))


def test_arguments_stop_being_kept_past_32_kib_for_the_result(tmp_path):
    script = "for (let i = 0; i < 6; i++) await tools.echo({word: String(i).repeat(7000)});\nreturn 'ok'"
    _, make = asyncio.run(run_scripts(tmp_path, script))
    calls = stored_results(make)[0]["nestedCalls"]["calls"]
    assert ["arguments" in c for c in calls] == [True, True, True, True, False, False]


def test_calls_a_nested_tool_makes_join_the_record_of_the_model_issued_call(tmp_path):
    @tool(parameters={"type": "object", "properties": {}})
    async def relay(args, run):
        """Call echo on the caller's behalf."""
        inner = await run.ctx.execute_tool("echo", {"word": "deep"}, parent_tool_call_id=run.tool_call_id)
        return inner.content[0].text

    from support.codemode_scripts import echo
    _, make = asyncio.run(run_scripts(tmp_path, "return await tools.relay({})", tools=[echo, relay]))
    (stored,) = stored_results(make)
    parent = stored["toolCallId"]
    assert [(c["id"], c["name"]) for c in stored["nestedCalls"]["calls"]] == [
        (f"{parent}/1", "relay"), (f"{parent}/1/1", "echo")]


def test_the_usage_of_nested_results_at_every_depth_is_added_to_the_scripts_result(tmp_path):
    from pi_core import TextContent, ToolResult, Usage

    def spending(tokens: int):
        @tool(name=f"spend{tokens}", parameters={"type": "object", "properties": {}})
        async def spend(args, run):
            """Model work of its own."""
            if tokens == 5:  # one level down: its own call's usage counts too
                await run.ctx.execute_tool("spend7", {}, parent_tool_call_id=run.tool_call_id)
            return ToolResult(content=[TextContent("spent")], usage=Usage(input=tokens, output=1, total_tokens=tokens + 1))
        return spend

    found, make = asyncio.run(run_scripts(tmp_path, "await tools.spend5({}); await tools.spend7({}); return 1",
                                          tools=[spending(5), spending(7)]))
    (result,) = found
    assert (result.usage.input, result.usage.output, result.usage.total_tokens) == (19, 3, 22)
    assert stored_results(make)[0]["usage"]["input"] == 19


def test_compaction_lists_the_files_a_scripts_calls_read_and_wrote(tmp_path):
    found, _ = asyncio.run(run_scripts(tmp_path, "return 1"))
    message = found[0]
    message.nested_calls = {"calls": [{"id": "c/1", "name": "read", "arguments": {"path": "a.txt"}, "status": "ok"},
                                      {"id": "c/2", "name": "write", "arguments": {"path": "b.txt"}, "status": "ok"},
                                      {"id": "c/3", "name": "read", "argumentsBytes": 9000, "status": "ok"}],
                            "complete": False}
    ops = FileOps()
    ops.add_from(message)
    assert ops.lists() == (["a.txt"], ["b.txt"])


def test_an_html_export_lists_the_nested_calls_as_pi16s_does(tmp_path):
    found, _ = asyncio.run(run_scripts(tmp_path, "await tools.echo({word: 'a'}); return 1"))
    message = found[0]
    message.nested_calls["calls"].append({"id": "x/2", "name": "echo", "argumentsBytes": 9000, "status": "error",
                                         "durationMs": 3, "error": "it broke\nbadly"})
    message.nested_calls["complete"] = False
    _, _, body = _render_message(message)
    took = message.nested_calls["calls"][0]["durationMs"]
    assert "Nested calls: 2 (incomplete record)" in body
    assert f'✓ echo {{&quot;word&quot;:&quot;a&quot;}} {took}ms' in body or f'✓ echo {{"word":"a"}} {took}ms' in body
    assert "✗ echo [arguments omitted, 9000 bytes] 3ms\n    it broke\n    badly" in body


@pytest.mark.requires("pi16")
def test_pi16_and_we_record_a_scripts_calls_alike(tmp_path):
    from support.codemode_scripts import print_run_side_by_side
    from support.llm_server import Reply

    script = ("await tools.read({path: 'a.txt'});\nawait tools.read({path: 'missing.txt'}).catch(() => 0);\n"
              "await tools.read({path: 'y'.repeat(9000)}).catch(() => 0);\nreturn 'ok'")

    def record(which: str) -> dict:
        replies = [Reply(tool_calls=[("codemode", {"code": script}, "call_0")]), Reply(text="done")]
        _, agent, _ = print_run_side_by_side(which, tmp_path, replies, "--tools", "+codemode")
        session_file = next((agent / "sessions").rglob("*.jsonl"))
        lines = [json.loads(line) for line in session_file.read_text().splitlines()]
        (stored,) = [e["message"] for e in lines if e.get("type") == "message" and e["message"]["role"] == "toolResult"]
        nested = stored["nestedCalls"]
        for call in nested["calls"]:
            assert isinstance(call.pop("durationMs"), int)
            call["error"] = bool(call.get("error"))
        return nested

    assert record("ours") == record("pi16")
