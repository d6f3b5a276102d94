"""``--tools``, ``--exclude-tools`` and the ``defaultTools`` setting with pi 1.6's
additions: ``+tool_search`` (a tool registered off), ``mcp__server__*`` patterns (an
allow-list naming MCP tools takes the others away), the user's and the project's lists."""

from __future__ import annotations

import asyncio

import pytest

from pi_core import Tool, hookimpl
from pi_plugins.sdk import create_harness
from pi_core.app.settings import Settings
from pi_plugins.cli.tool_selection import ToolFlagError, apply_tool_flags, default_tools, parse_tools
from support.cli import parse_run_args


class McpLike:
    """Tools named as MCP tools are, one direct and two deferred, and a plugin tool."""

    @hookimpl
    def register_tools(self):
        def mcp(name, **options):
            return Tool(name=name, description=name, function=lambda args, run: "ok", **options)

        return [mcp("mcp__radius__query"), mcp("mcp__radius__list", default_active=False, exposure="deferred"),
                mcp("mcp__other__ping", default_active=False, exposure="deferred"), mcp("plugin_tool")]


def chosen(server, tmp_path, *flags, user=None, project=None):
    """(declared tools, registered tools) after the flags and settings."""
    async def go():
        settings = Settings(user or {}, project or {})
        harness = await create_harness(McpLike(), model=server.model("openai-completions"), cwd=str(tmp_path), builtins=True,
                                       settings=settings)
        apply_tool_flags(parse_run_args(*flags), harness)
        return ([t.name for t in harness.agent.active_tools()], {t.name for t in harness.agent.tools})

    return asyncio.run(go())


BASE = ["read", "bash", "edit", "write", "mcp__radius__query", "plugin_tool"]


def test_plus_tool_search_keeps_the_defaults_and_adds_it(server, tmp_path):
    declared, _ = chosen(server, tmp_path, "--tools", "+tool_search")
    assert sorted(declared) == sorted([*BASE, "tool_search"])


def test_default_tools_plus_entries_change_the_inherited_selection(server, tmp_path):
    declared, _ = chosen(server, tmp_path, user={"defaultTools": ["+tool_search", "-write"]})
    assert sorted(declared) == sorted(["read", "bash", "edit", "tool_search", "mcp__radius__query", "plugin_tool"])


def test_a_project_list_of_plain_names_replaces_the_users_and_plus_minus_then_apply(server, tmp_path):
    declared, _ = chosen(server, tmp_path, user={"defaultTools": ["+grep"]},
                         project={"defaultTools": ["read", "+tool_search", "-plugin_tool"]})
    assert sorted(declared) == sorted(["read", "tool_search", "mcp__radius__query"])
    declared, _ = chosen(server, tmp_path, user={"defaultTools": ["read"]}, project={"defaultTools": ["+ls"]})
    assert sorted(declared) == sorted(["read", "ls", "mcp__radius__query", "plugin_tool"])


def test_an_empty_default_tools_turns_off_the_builtin_tools_only(server, tmp_path):
    declared, _ = chosen(server, tmp_path, user={"defaultTools": []})
    assert sorted(declared) == ["mcp__radius__query", "plugin_tool"]


def test_tools_flag_changes_apply_on_top_of_default_tools_and_plain_names_override_them(server, tmp_path):
    declared, _ = chosen(server, tmp_path, "--tools", "-bash", user={"defaultTools": ["+tool_search"]})
    assert "tool_search" in declared and "bash" not in declared
    declared, _ = chosen(server, tmp_path, "--tools", "read", user={"defaultTools": ["+tool_search"]})
    assert declared == ["read"]


def test_an_allow_list_without_mcp_entries_declares_no_mcp_tool_but_keeps_them_all(server, tmp_path):
    declared, registered = chosen(server, tmp_path, "--tools", "read,tool_search")
    assert declared == ["read", "tool_search"]
    assert {"mcp__radius__query", "mcp__radius__list", "mcp__other__ping"} <= registered


def test_an_mcp_pattern_keeps_only_that_servers_tools(server, tmp_path):
    declared, registered = chosen(server, tmp_path, "--tools", "read,tool_search,mcp__radius__*")
    assert declared == ["read", "tool_search", "mcp__radius__query"]  # the deferred one waits for a search
    assert "mcp__other__ping" not in registered and "mcp__radius__list" in registered


def test_exclude_tools_patterns_reach_mcp_tools(server, tmp_path):
    declared, _ = chosen(server, tmp_path, "--exclude-tools", "mcp__*,write")
    assert sorted(declared) == sorted(["read", "bash", "edit", "plugin_tool"])


def test_default_tools_rules():
    assert default_tools([None, None], ["read", "bash"]) == (["read", "bash"], [])
    assert default_tools([["+tool_search"], ["-bash"]], ["read", "bash"]) == (["read", "tool_search"], [])
    assert default_tools([["grep", "+find", "-grep"]], ["read"], ["mine"]) == (["mine", "find"], [])
    assert default_tools(["read"], ["read"])[1] == ["defaultTools must be a list of tool names"]
    with pytest.raises(ToolFlagError):
        parse_tools("+mcp__radius__*")


def test_a_deferred_tool_named_exactly_is_declared(server, tmp_path):
    declared, _ = chosen(server, tmp_path, "--tools", "read,mcp__other__ping")
    assert declared == ["read", "mcp__other__ping"]


def _reloaded(server, tmp_path, before: list, after: list, *flags, off=()):
    """(tools on after start, tools on after ``/reload``) with ``defaultTools`` changed
    from ``before`` to ``after`` in the user's settings.json, ``off`` switched off in between."""
    import json

    async def go():
        agent_dir, cwd = tmp_path / "agent", tmp_path / "project"
        agent_dir.mkdir(parents=True)
        cwd.mkdir()
        (agent_dir / "settings.json").write_text(json.dumps({"defaultTools": before}))
        settings = Settings.load(cwd, agent_dir, project_trusted=True)
        harness = await create_harness(McpLike(), model=server.model("openai-completions"), cwd=str(cwd),
                                       builtins=True, settings=settings)
        apply_tool_flags(parse_run_args(*flags), harness)
        agent = harness.agent
        agent.set_active_tools([t.name for t in agent.active_tools() if t.name not in off])
        started = [t.name for t in agent.active_tools()]
        (agent_dir / "settings.json").write_text(json.dumps({"defaultTools": after}))
        await harness.reload()
        return started, [t.name for t in agent.active_tools()]

    return asyncio.run(go())


def test_reload_enables_tools_newly_added_to_default_tools_as_pi16(server, tmp_path):
    """pi 1.6: newly named tools come on; tools no longer named stay on; a tool switched
    off in the session stays off unless the setting newly names it."""
    started, now = _reloaded(server, tmp_path, ["+grep"], ["+grep", "+ls", "+find", "-edit"], off=("bash", "grep", "find"))
    assert "grep" not in started and "ls" not in started
    assert {"ls", "find", "edit"} <= set(now)  # newly named (find though it was off); edit stays
    assert "bash" not in now and "grep" not in now  # switched off, not newly named


def test_reload_keeps_the_tools_flags_over_the_setting(server, tmp_path):
    _, now = _reloaded(server, tmp_path, [], ["+ls"], "--tools", "read,grep")
    assert now == ["read", "grep"]
    _, now = _reloaded(server, tmp_path / "x", [], ["+ls", "+grep"], "--exclude-tools", "ls")
    assert "grep" in now and "ls" not in now
