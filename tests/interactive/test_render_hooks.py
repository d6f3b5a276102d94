"""pi 1.6's rendering API for plugins, in the chat: Markdown transformers
(``register_markdown_transformers``), entry renderers (``register_entry_renderers``),
tool renderers for any tool (``register_tool_renderers``), and ``key_text`` / ``key_hint``
in render contexts, which follow keybindings.json. In this process, on the emulated screen."""

from __future__ import annotations

import json

import pytest
from support.llm_server import Reply

from pi_core import MarkdownTransformer

PLUGIN = '''
from pi_core import EntryRenderer, MarkdownTransformer, ToolRenderer, hookimpl
from pi_core.protocol.commands import Command
from pi_core.protocol.tools import ToolResult, tool


def draw_call(args, theme, context):
    return ["WEATHER CALL for " + str(args.get("city"))]


def draw_result(result, options, theme, context):
    return ["WEATHER DONE (" + context["key_hint"]("app.tools.expand", "to expand") + ")"]


@tool(description="The weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}},
      render_call=draw_call, render_result=draw_result)
async def weather(args, run):
    return ToolResult.text("sunny")


def ghosts(name, next):
    if not name.startswith("mcp__"):
        return next()
    return next() or {"render_call": lambda args, theme, context: ["GHOST CALL " + name]}


def broken(markdown, info):
    raise RuntimeError("no")


async def card(args, ctx):
    ctx.append_entry("status-card", {"title": "Indexed files", "count": 17})


@hookimpl
def register_tools():
    return [weather]


@hookimpl
def register_tool_renderers(ctx):
    return [ToolRenderer(ghosts)]


@hookimpl
def register_markdown_transformers(ctx):
    return [MarkdownTransformer(lambda markdown, info: markdown.replace(":warning:", "WARN-SIGN")),
            MarkdownTransformer(broken),
            MarkdownTransformer(lambda markdown, info: markdown.replace("Beware", "BEWARE-" + info.message_type)),
            MarkdownTransformer(lambda markdown, info: markdown.replace("hello", "HI-USER"), message_types=["user"])]


@hookimpl
def register_entry_renderers(ctx):
    return [EntryRenderer("status-card", lambda entry, options: "CARD " + entry.data["title"] + ": "
                          + str(entry.data["count"]) + " [" + options.key_text("app.tools.expand") + "]")]


@hookimpl
def register_commands(ctx):
    return [Command("card", "Add a status card", handler=card)]
'''


def test_markdown_transformers_chain_on_their_surfaces_and_one_that_raises_is_skipped(pi_screen, server):
    server.push(Reply(text="Beware :warning: hello there"))
    term = pi_screen(plugin=PLUGIN)
    term.submit("hello model")
    screen = term.wait_for("BEWARE-assistant WARN-SIGN hello there")
    assert "HI-USER model" in screen  # the user-only transformer ran on the user's message only
    assert ":warning:" not in screen
    assert "hello model" in json.dumps(server.requests[0].body)  # display only: the model got what was typed


def test_a_tool_renderer_draws_an_unregistered_tool_and_defers_to_a_tools_own(pi_screen, server):
    server.push(Reply(tool_calls=[("mcp__ghost__look", {}), ("weather", {"city": "Oslo"})]), Reply(text="Done."))
    term = pi_screen(plugin=PLUGIN)
    term.submit("go")
    screen = term.wait_for("Done.")
    assert "GHOST CALL mcp__ghost__look" in screen
    assert "WEATHER CALL for Oslo" in screen and "WEATHER DONE (ctrl+o to expand)" in screen


def test_key_hints_and_entry_renderers_follow_the_users_keybindings(pi_screen, server):
    server.push(Reply(tool_calls=[("weather", {"city": "Oslo"})]), Reply(text="Done."))
    term = pi_screen(plugin=PLUGIN, agent_files={"keybindings.json": json.dumps({"app.tools.expand": ["ctrl+e"]})})
    term.submit("go")
    term.wait_for("WEATHER DONE (ctrl+e to expand)")
    term.wait_idle()
    term.submit("/card")
    term.wait_for("CARD Indexed files: 17 [ctrl+e]")


def test_a_transformer_names_only_surfaces_pi_knows():
    with pytest.raises(ValueError, match="unknown Markdown surfaces"):
        MarkdownTransformer(str.upper, message_types=["footer"])


def test_a_resumed_session_shows_its_entries_after_the_messages_before_them(pi_screen, server):
    server.push(Reply(text="First answer."), Reply(text="Second answer."))
    term = pi_screen(plugin=PLUGIN)
    term.submit("one")
    term.wait_for("First answer.")
    term.wait_idle()
    term.submit("/card")
    term.wait_for("CARD Indexed files: 17")
    term.submit("two")
    term.wait_for("Second answer.")
    term.wait_idle()
    term.close()
    again = pi_screen("--continue", plugin=PLUGIN)
    screen = again.wait_drawn("Second answer.")
    assert screen.index("First answer.") < screen.index("CARD Indexed files: 17") < screen.index("Second answer.")
