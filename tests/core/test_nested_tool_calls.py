"""``ctx.execute_tool``: a tool runs another tool as a nested call, through validation and
the tool hooks, its events marked with the parent; failures come back as results."""

from __future__ import annotations

import asyncio

from pi_core import Agent, Plugins, ToolCallDecision, hookimpl, tool
from pi_core.testing.scripted import Reply, ScriptedProvider, scripted_model


@tool(parameters={"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]})
def echo(args, run):
    """Say it back."""
    return f"echo {args['word']}"


@tool(parameters={"type": "object", "properties": {}})
async def caller(args, run):
    """Call echo three ways."""
    ok = await run.ctx.execute_tool("echo", {"word": "hi"}, parent_tool_call_id=run.tool_call_id)
    blocked = await run.ctx.execute_tool("echo", {"word": "no"}, parent_tool_call_id=run.tool_call_id)
    invalid = await run.ctx.execute_tool("echo", {}, parent_tool_call_id=run.tool_call_id)
    missing = await run.ctx.execute_tool("nope", {}, parent_tool_call_id=run.tool_call_id)
    return " | ".join(f"{r.is_error}:{r.content[0].text.splitlines()[0]}" for r in (ok, blocked, invalid, missing))


def test_a_nested_call_goes_through_the_hooks_and_its_events_name_the_parent():
    seen = []

    class Watch:
        @hookimpl
        def before_tool_call(self, event):
            seen.append(("before", event.tool_call_id, event.parent_tool_call_id))
            if event.arguments.get("word") == "no":
                return ToolCallDecision(block=True, reason="not that word")

        @hookimpl
        def tool_execution_start(self, event):
            seen.append(("start", event.tool_call_id, event.parent_tool_call_id))

    plugins = Plugins()
    plugins.register(Watch())
    plugins.register(ScriptedProvider([Reply(tool_calls=[("caller", {})]), Reply(text="ok")]))
    agent = Agent(model=scripted_model(), plugins=plugins, tools=[echo, caller])
    messages = asyncio.run(agent.prompt("go"))
    result = next(m for m in messages if m.role == "toolResult")
    assert result.content[0].text == ("False:echo hi | True:not that word | "
                                      'True:Validation failed for tool "echo": | True:Tool nope not found')
    parent = result.tool_call_id
    assert ("before", f"{parent}/1", parent) in seen and ("start", f"{parent}/4", parent) in seen
    assert ("start", parent, None) in seen
    assert [m.role for m in messages] == ["user", "assistant", "toolResult", "assistant"]
