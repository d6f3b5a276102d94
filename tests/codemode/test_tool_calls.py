"""Scripts call the session's tools through the harness's own tool execution: in
parallel with ``Promise.all``, each call through ``before_tool_call`` and marked with
the codemode call as its parent, a blocked or failed call rejecting in the script, and
calls still running when the script ends cancelled."""

from __future__ import annotations

import asyncio
import json

import pytest
from support.codemode_scripts import echo, output_of, results, run_scripts

from pi_core import ToolCallDecision, hookimpl, tool

pytestmark = pytest.mark.process


def test_two_calls_under_promise_all_run_together_and_come_back_in_one_result(tmp_path):
    arrived: list[str] = []
    both_here = asyncio.Event()

    @tool(parameters={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
    async def meet(args, run):
        """Wait until both callers are here."""
        arrived.append(args["name"])
        if len(arrived) == 2:
            both_here.set()
        await asyncio.wait_for(both_here.wait(), 10)  # a sequential run would time out here
        return f"{args['name']} met {len(arrived)}"

    (text,) = results(tmp_path, "const [a, b] = await Promise.all([tools.meet({name: 'ann'}), "
                                "tools.meet({name: 'bob'})]);\nreturn {a, b}", tools=[meet])
    assert text.startswith("Script completed")
    assert json.loads(output_of(text).removeprefix("Output:\n\n")) == {"a": "ann met 2", "b": "bob met 2"}


def test_a_call_before_tool_call_blocks_rejects_in_the_script_with_the_reason(tmp_path):
    seen = []

    class Guard:
        @hookimpl
        def before_tool_call(self, event):
            seen.append((event.tool_name, event.tool_call_id, event.parent_tool_call_id))
            if event.tool_name == "echo" and event.arguments.get("word") == "forbidden":
                return ToolCallDecision(block=True, reason="echo of that word is not allowed")

    found, make = asyncio.run(run_scripts(
        tmp_path, "const r = await Promise.allSettled([tools.echo({word: 'fine'}), tools.echo({word: 'forbidden'})]);\n"
                  "return r.map((x) => x.status === 'fulfilled' ? x.value : 'rejected: ' + x.reason.message)",
        plugins=(Guard(),)))
    (result,) = found
    assert json.loads(output_of(result.content[0].text).removeprefix("Output:\n\n")) == [
        "echo fine", "rejected: echo of that word is not allowed"]
    parent = result.tool_call_id
    nested = [entry for entry in seen if entry[0] == "echo"]
    assert sorted(nested) == [("echo", f"{parent}/1", parent), ("echo", f"{parent}/2", parent)]


def test_nested_calls_emit_their_events_with_the_parent_and_stay_out_of_the_transcript(tmp_path):
    events = []

    class Watch:
        @hookimpl
        def tool_execution_end(self, event):
            events.append((event.tool_name, event.parent_tool_call_id, event.is_error))

    found, make = asyncio.run(run_scripts(tmp_path, "await tools.echo({word: 'a'}); return 'ok'", plugins=(Watch(),)))
    (result,) = found
    assert events == [("echo", result.tool_call_id, False), ("codemode", None, False)]
    assert [m.tool_name for m in found] == ["codemode"]


def test_a_failed_call_rejects_and_a_failed_script_names_the_calls_it_made(tmp_path):
    (text,) = results(tmp_path, "await tools.echo({word: 'one'});\nawait tools.echo({});")
    assert text.startswith("Script failed")
    assert 'Validation failed for tool "echo"' in text
    assert text.endswith("Tool calls made before the failure (they are not undone): echo (ok), echo (error)")


def test_calls_still_running_when_the_script_ends_are_cancelled(tmp_path):
    state = {"started": 0, "cancelled": 0}

    @tool(parameters={"type": "object", "properties": {}})
    async def forever(args, run):
        """Never ends by itself."""
        state["started"] += 1
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            state["cancelled"] += 1
            raise
        return "woke"

    (early, timed) = results(tmp_path, "tools.forever({}); await null; return 'early'",
                             '// @options: {"timeout_ms": 400}\nawait tools.forever({})',
                             tools=[forever])
    assert output_of(early) == "Output:\n\nearly"
    assert timed.endswith("Tool calls made before the failure (they are not undone): forever (cancelled)")
    assert state == {"started": 2, "cancelled": 2}


def test_an_unknown_tool_is_a_type_error_that_names_the_tools(tmp_path):
    (text,) = results(tmp_path, "return await tools.nope({})")
    assert "TypeError: tools.nope is not a tool here. Tools: echo." in text
    assert text.endswith("No tool calls were made.")


def test_identifiers_replace_characters_javascript_names_cannot_hold(tmp_path):
    @tool(name="mcp__dev-radius__search", parameters={"type": "object", "properties": {}})
    def dashed(args, run):
        """Search the radius."""
        return "found"

    (text,) = results(tmp_path, "return await tools.mcp__dev_radius__search({})", tools=[dashed])
    assert output_of(text) == "Output:\n\nfound"


def test_store_and_load_keep_values_across_calls_and_in_the_session(tmp_path):
    found, make = asyncio.run(run_scripts(
        tmp_path, "store('cursor', {page: 2}); store('gone', 1); return load('cursor')",
        "store('gone', undefined); store('fail', 1); throw new Error('no')",
        "return [load('cursor'), load('gone'), load('fail')]"))
    texts = [m.content[0].text for m in found]
    assert output_of(texts[0]) == 'Output:\n\n{"page":2}'
    assert output_of(texts[2]) == 'Output:\n\n[{"page":2},1,null]'  # the failed script's writes were not kept
    session_file = next(make.sessions.glob("*.jsonl"))
    entries = [json.loads(line) for line in session_file.read_text().splitlines()]
    stored = [e["data"] for e in entries if e.get("customType") == "codemode-store"]
    assert stored == [{"set": {"cursor": {"page": 2}, "gone": 1}, "delete": []}]


def test_a_value_over_the_store_limit_fails_the_script(tmp_path):
    (text,) = results(tmp_path, "store('big', 'x'.repeat(300000))")
    assert text.startswith("Script failed") and "RangeError" in text and "262144" in text


def test_all_tools_describe_tool_and_search_tools_find_the_tools(tmp_path):
    @tool(parameters={"type": "object", "properties": {"city": {"type": "string", "description": "Where"}},
                      "required": ["city"]})
    def weather(args, run):
        """Tell the weather forecast for a city."""
        return "sunny"

    listed, described, searched, missing = results(
        tmp_path, "return ALL_TOOLS.map((t) => t.name)", "return await describeTool('weather')",
        "return (await searchTools('forecast city', {limit: 1})).map((t) => t.name)",
        "return [await describeTool('nope'), await describeNamespace('nope')]", tools=[echo, weather])
    assert output_of(listed) == 'Output:\n\n["echo","weather"]'
    assert "Tell the weather forecast" in described and "city: string;" in described and "// Where" in described
    assert output_of(searched) == 'Output:\n\n["weather"]'
    assert output_of(missing) == "Output:\n\n[null,null]"


def test_models_has_no_classifier_or_image_models_and_a_run_says_so(tmp_path):
    """The chat models are compared with pi 1.6's in test_with_pi16; this harness's
    catalogue has no classifier or image models to list or run."""
    listed, classified, wrong = results(
        tmp_path, "return [await models.getModelsOfType('classifier'), await models.getAvailableOfType('image'), "
                  "await models.getModelOfType('chat', 'no', 'such')]",
        "return await models.classify({provider: 'no', id: 'such'}, {state: {}, questions: {}})",
        "return await models.getModelsOfType('poem')")
    assert output_of(listed) == "Output:\n\n[[],[],null]"
    assert classified.startswith("Script failed") and 'Unknown classifier model "no/such". List the classifier ' \
        'models you can use with models.getAvailableOfType("classifier").' in classified
    assert wrong.startswith("Script failed") and "Unknown model type 'poem'" in wrong


def test_classify_and_generate_images_each_fail_in_one_line_that_says_what_is_missing(tmp_path):
    """Issue 37 allows 'not supported here': a run names the model type it needs and how to
    list those available (none, here), in one line, whether the model is unknown or a chat model."""
    runs = ["models.classify({provider: 'no', id: 'such'}, {state: {}, questions: {}})",
            "models.generateImages({provider: 'no', id: 'such'}, {input: []})",
            "models.classify({provider: 'test', id: 'test-model'}, {state: {}, questions: {}})",
            "models.generateImages({provider: 'test', id: 'test-model'}, {input: []})"]
    texts = results(tmp_path, *(f"try {{ await {run} }} catch (e) {{ return e.message }}" for run in runs))
    said = [output_of(text).removeprefix("Output:\n\n") for text in texts]
    assert said[:2] == [
        'Unknown classifier model "no/such". List the classifier models you can use with '
        'models.getAvailableOfType("classifier").',
        'Unknown image model "no/such". List the image models you can use with models.getAvailableOfType("image").']
    assert all("\n" not in line for line in said)
    assert all(line.endswith(("models.getAvailableOfType(\"classifier\").", "models.getAvailableOfType(\"image\").")) for line in said)
