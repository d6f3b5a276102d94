"""``tool_search`` in a session against the scripted server: the model searches, the next
request declares what it found, and the loaded tools stay declared on that branch
(resume, fork) and only there (``/tree``). The plugin is a built-in: ``-builtin:tool-search``
drops it."""

from __future__ import annotations

import asyncio
import json

from pi_core import Tool, hookimpl
from pi_plugins.sdk import create_harness
from pi_core.app.settings import Settings
from pi_core.session import Session
from pi_plugins import tool_search
from pi_plugins.providers import openai_completions
from support.llm_server import Reply


def deferred(name: str, description: str) -> Tool:
    return Tool(name=name, description=description, default_active=False, exposure="deferred",
                parameters={"type": "object", "properties": {"city": {"type": "string", "description": "City"}}},
                function=lambda args, run: f"{name} ran with {json.dumps(args)}")


class Catalogue:
    """A plugin with two tools only ``tool_search`` can bring in."""

    @hookimpl
    def register_tools(self):
        return [deferred("weather_forecast", "Get the weather forecast for a city."),
                deferred("stock_quote", "Get a stock quote by ticker symbol.")]


def declared(request) -> list[str]:
    return [t["function"]["name"] for t in request.body.get("tools", [])]


async def harness_on(server, session, tmp_path):
    return await create_harness(openai_completions, tool_search, Catalogue(), model=server.model("openai-completions"),
                                cwd=str(tmp_path), session=session, settings=Settings({}),
                                active_tools=["tool_search"])


def search_then_use(server):
    server.push(Reply(tool_calls=[("tool_search", {"query": "weather forecast"})]),
                Reply(tool_calls=[("weather_forecast", {"city": "Paris"})]),
                Reply(text="sunny"))


def test_the_next_request_declares_what_the_search_found_and_the_session_records_it(server, tmp_path):
    async def go():
        session = Session.create(tmp_path, tmp_path / "sessions")
        harness = await harness_on(server, session, tmp_path)
        search_then_use(server)
        await harness.prompt("forecast for Paris?")
        return harness

    harness = asyncio.run(go())
    first, second, third = server.requests[-3:]
    assert "weather_forecast" not in declared(first) and "tool_search" in declared(first)
    assert declared(second) == [*declared(first), "weather_forecast"]
    results = [m for m in harness.messages if m.role == "toolResult"]
    assert results[0].content[0].text == ("Loaded 1 tool. They are available from your next call:\n"
                                          "- weather_forecast: Get the weather forecast for a city.")
    assert results[0].details == {"loaded": ["weather_forecast"]}
    assert results[1].content[0].text == 'weather_forecast ran with {"city": "Paris"}' and not results[1].is_error
    lines = [json.loads(line) for line in harness.session.file.read_text().splitlines()]
    change = next(line for line in lines if line.get("message", {}).get("role") == "system")
    assert change["message"]["content"] == ""
    assert change["message"]["toolsAdded"] == [{
        "name": "weather_forecast", "description": "Get the weather forecast for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City"}}}}]
    tool_result_line = next(line for line in lines if line.get("message", {}).get("toolName") == "tool_search")
    assert change["parentId"] == tool_result_line["id"]  # after the result, as pi 1.6 writes it
    asyncio.run(harness.close())


def test_loaded_tools_survive_resume_and_fork_and_leave_with_their_branch(server, tmp_path):
    async def go():
        session = Session.create(tmp_path, tmp_path / "sessions")
        harness = await harness_on(server, session, tmp_path)
        server.push(Reply(text="hello"))
        await harness.prompt("hi")
        before_search = harness.session.leaf_id
        search_then_use(server)
        await harness.prompt("forecast for Paris?")
        path = harness.session.file
        await harness.close()

        resumed = await harness_on(server, Session.open(path), tmp_path)
        server.push(Reply(text="still there"))
        await resumed.prompt("again")
        on_resume = declared(server.requests[-1])

        await resumed.navigate_tree(before_search)
        server.push(Reply(text="other branch"))
        await resumed.prompt("something else")
        on_other_branch = declared(server.requests[-1])

        searched_leaf = next(e.id for e in resumed.session.entries
                             if getattr(getattr(e, "message", None), "role", None) == "assistant"
                             and e.message.content and getattr(e.message.content[0], "text", "") == "still there")
        await resumed.navigate_tree(searched_leaf)
        server.push(Reply(text="back"))
        await resumed.prompt("back again")
        back = declared(server.requests[-1])

        await resumed.fork(searched_leaf, position="at")
        server.push(Reply(text="forked"))
        await resumed.prompt("in the fork")
        in_fork = declared(server.requests[-1])
        await resumed.close()
        return on_resume, on_other_branch, back, in_fork

    on_resume, on_other_branch, back, in_fork = asyncio.run(go())
    assert on_resume == ["tool_search", "weather_forecast"]
    assert on_other_branch == ["tool_search"]
    assert back == ["tool_search", "weather_forecast"]
    assert in_fork == ["tool_search", "weather_forecast"]


def test_a_search_loads_only_undeclared_searchable_tools_best_first_within_the_limit(server, tmp_path):
    async def go():
        harness = await harness_on(server, Session.in_memory(str(tmp_path)), tmp_path)
        server.push(Reply(tool_calls=[("tool_search", {"query": "get quote forecast read", "limit": 1})]),
                    Reply(tool_calls=[("tool_search", {"query": "get quote forecast read"})]),
                    Reply(tool_calls=[("tool_search", {"query": "kangaroo"})]),
                    Reply(tool_calls=[("tool_search", {"query": "  "}), ("tool_search", {"query": "x", "limit": 0})]),
                    Reply(text="done"))
        await harness.prompt("go")
        return [m for m in harness.messages if m.role == "toolResult"], server.requests[-1]

    results, last = asyncio.run(go())
    first, second, none, empty, zero = results
    assert first.details == {"loaded": ["weather_forecast"]}  # limit 1
    assert second.details == {"loaded": ["stock_quote"]}
    assert none.content[0].text == "No matching tools found."
    assert empty.is_error and "query must not be empty" in empty.content[0].text
    assert zero.is_error and "limit must be a positive integer" in zero.content[0].text
    assert declared(last) == ["tool_search", "weather_forecast", "stock_quote"]


def test_tool_search_is_off_by_default_and_a_builtin_that_can_be_dropped(server, tmp_path):
    async def tools(settings):
        harness = await create_harness(model=server.model("openai-completions"), cwd=str(tmp_path),
                                       builtins=True, settings=Settings(settings))
        return [t.name for t in harness.agent.tools], [t.name for t in harness.agent.active_tools()]

    registered, active = asyncio.run(tools({}))
    assert "tool_search" in registered and "tool_search" not in active
    registered, _ = asyncio.run(tools({"extensions": ["-builtin:tool-search"]}))
    assert "tool_search" not in registered
