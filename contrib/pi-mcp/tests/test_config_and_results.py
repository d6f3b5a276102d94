"""Configuration files and result mapping, without starting a server."""

import json
import subprocess
import sys
import textwrap

from pi_mcp.config import load_config
from pi_mcp.results import to_tool_result, tool_name

from pi_core import ImageContent, TextContent
from pi_core.testing import assert_light_import


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))


def test_project_servers_replace_global_ones_of_the_same_name_and_variables_expand(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKEN_FOR_TEST", "abc")
    agent, work = tmp_path / "agent", tmp_path / "work"
    write(agent / "mcp.json", {"mcpServers": {
        "shared": {"command": "global-cmd"},
        "everywhere": {"command": "tool", "args": ["--token", "${TOKEN_FOR_TEST}", 3], "cwd": "srv"}}})
    write(work / ".pi" / "mcp.json", {"mcpServers": {
        "shared": {"command": "project-cmd", "env": {"KEY": "${TOKEN_FOR_TEST}"}, "timeout": 5},
        "off": {"command": "x", "enabled": False}}})
    config = load_config(work, agent)
    assert config.problems == []
    assert [s.name for s in config.servers] == ["everywhere", "shared"]
    everywhere, shared = config.servers
    assert everywhere.args == ["--token", "abc", "3"] and everywhere.cwd == str(agent / "srv")
    assert shared.command == "project-cmd" and shared.env == {"KEY": "abc"} and shared.cwd == str(work)
    assert shared.timeout == 5.0 and shared.startup_timeout == 30.0


def test_bad_files_and_entries_are_reported_and_skipped(tmp_path):
    agent, work = tmp_path / "agent", tmp_path / "work"
    write(agent / "mcp.json", "{not json")
    write(work / ".pi" / "mcp.json", {"mcpServers": {
        "good": {"command": "ok"}, "nocmd": {"args": []}, "remote": {"url": "http://example.invalid/mcp"},
        "badargs": {"command": "x", "args": "one two"}, "badtimeout": {"command": "x", "timeout": -1},
        "notobject": "x"}})
    config = load_config(work, agent)
    assert [s.name for s in config.servers] == ["good"]
    assert len(config.problems) == 6
    assert "cannot read it" in config.problems[0]
    assert any("only stdio servers" in p for p in config.problems)
    assert any("'timeout' must be a positive number" in p for p in config.problems)
    write(work / ".pi" / "mcp.json", {"servers": {}})
    assert "expected an object with \"mcpServers\"" in load_config(work, tmp_path / "none").problems[0]


def test_results_map_to_text_and_images_and_keep_structured_content_in_details():
    result = to_tool_result({"content": [
        {"type": "text", "text": "hello"},
        {"type": "image", "data": "AAAA", "mimeType": "image/jpeg"},
        {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "inside"}},
        {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAAAAAA", "mimeType": "application/zip"}},
        {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
        {"type": "resource_link", "uri": "file:///c", "name": "c"},
        {"type": "something_new", "x": 1}],
        "structuredContent": {"n": 1}, "isError": True}, "srv", "t")
    assert result.is_error
    assert result.details == {"server": "srv", "tool": "t", "structuredContent": {"n": 1}}
    assert result.content == [
        TextContent("hello"), ImageContent(data="AAAA", mime_type="image/jpeg"),
        TextContent("[resource file:///a.txt]\ninside"),
        TextContent("[resource file:///b.bin (application/zip, 6 bytes), not shown]"),
        TextContent("[audio audio/wav, 3 bytes, not shown]"), TextContent("[resource link file:///c] c"),
        TextContent('{"type": "something_new", "x": 1}')]
    assert to_tool_result({"structuredContent": {"a": 1}}, "s", "t").content == [TextContent('{\n  "a": 1\n}')]
    assert to_tool_result({"content": []}, "s", "t").content == [TextContent("(no output)")]


def test_tool_names_are_prefixed_and_safe_for_every_provider():
    assert tool_name("demo", "add") == "mcp__demo__add"
    assert tool_name("my server", "get.thing/v2") == "mcp__my_server__get_thing_v2"
    assert len(tool_name("s" * 40, "t" * 40)) == 64


def test_without_a_configured_server_nothing_of_mcp_is_imported(tmp_path):
    script = textwrap.dedent(f"""
        import asyncio, os, sys
        os.environ["PI_CODING_AGENT_DIR"] = {str(tmp_path / "agent")!r}
        import pi_mcp
        from pi_core import Context, Plugins
        ctx = Context(cwd={str(tmp_path)!r}, plugins=Plugins())
        print(asyncio.run(pi_mcp.register_tools(ctx)), "mcp" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[] False"


def test_loading_the_plugin_imports_nothing_heavy():
    assert_light_import("pi_mcp", also=("mcp",))


def test_an_untrusted_projects_servers_are_left_out(tmp_path):
    agent, work = tmp_path / "agent", tmp_path / "work"
    write(agent / "mcp.json", {"mcpServers": {"global": {"command": "g"}}})
    write(work / ".pi" / "mcp.json", {"mcpServers": {"local": {"command": "l"}}})
    assert [s.name for s in load_config(work, agent, project=False).servers] == ["global"]
    assert [s.name for s in load_config(work, agent).servers] == ["global", "local"]
