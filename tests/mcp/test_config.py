"""mcp.json as pi 1.6 reads it, tool names as it makes them, values as it resolves them,
and results as it shows them to the model; no server runs here."""

import json
import os

import pytest

from pi_core import ImageContent, TextContent
from pi_plugins.mcp.config import add_server, load, remove_server
from pi_plugins.mcp.naming import tool_name, tool_names
from pi_plugins.mcp.results import MAX_OUTPUT_BYTES, to_tool_result
from pi_plugins.mcp.values import UnresolvedValue, resolve

from .conftest import write_servers


def test_a_project_entry_replaces_the_users_and_an_override_keeps_its_credentials(tmp_path):
    agent, work = tmp_path / "agent", tmp_path / "work"
    write_servers(agent / "mcp.json", {
        "shared": {"command": "user-cmd"},
        "internal": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${T}"}},
        "docs": {"url": "https://docs.example.com/mcp", "exposure": "codemode-deferred"}})
    write_servers(work / ".pi" / "mcp.json", {
        "shared": {"command": "project-cmd"},
        "internal": {"enabled": False, "exposure": "direct"}})
    config = load(agent, work, project_trusted=True)
    assert config.errors == []
    by_name = {s.name: s for s in config.servers}
    assert by_name["shared"].config == {"command": "project-cmd"} and by_name["shared"].scope == "project"
    internal = by_name["internal"]
    assert not internal.enabled and internal.exposure == "direct"
    assert internal.config["headers"] == {"Authorization": "Bearer ${T}"}
    assert internal.source == str(agent / "mcp.json") and internal.override == str(work / ".pi" / "mcp.json")
    assert by_name["docs"].exposure == "codemode"  # the alias, resolved


def test_an_untrusted_projects_file_is_not_read(tmp_path):
    agent, work = tmp_path / "agent", tmp_path / "work"
    write_servers(agent / "mcp.json", {"user": {"command": "u"}})
    write_servers(work / ".pi" / "mcp.json", {"project": {"command": "p"}})
    assert [s.name for s in load(agent, work, project_trusted=False).servers] == ["user"]
    assert [s.name for s in load(agent, work, project_trusted=True).servers] == ["user", "project"]


def test_bad_entries_are_reported_in_pi_16s_words_and_skipped(tmp_path):
    agent = tmp_path / "agent"
    write_servers(agent / "mcp.json", {
        "good": {"command": "ok"},
        "old": {"type": "sse", "url": "https://example.com/sse"},
        "bad name": {"command": "x"},
        "nothing": {"args": []},
        "badexposure": {"command": "x", "exposure": "sometimes"},
        "good_": {"command": "x"}, "good-": {"command": "y"}})
    config = load(agent, tmp_path, project_trusted=False)
    assert [s.name for s in config.servers] == ["good", "good_"]
    path = agent / "mcp.json"
    assert config.errors == [
        f'{path}: server "old": legacy SSE transport is not supported; use the streamable HTTP URL',
        f'{path}: invalid server name "bad name" (use letters, digits, "_" and "-")',
        f'{path}: server "nothing" needs either "command" (stdio) or "url" (streamable HTTP)',
        f'{path}: server "badexposure": exposure must be one of "codemode", "deferred", "direct", "hidden"',
        f'{path}: server "good-" conflicts with "good_"']
    (agent / "mcp.json").write_text("{not json")
    assert load(agent, tmp_path, project_trusted=False).errors[0].startswith(f"{path}: ")


def test_tool_exposure_takes_exact_names_before_patterns(tmp_path):
    write_servers(tmp_path / "mcp.json", {"gh": {"command": "x", "exposure": "deferred", "toolExposure": {
        "search_code": "direct", "get_*": "codemode", "get_me": "hidden"}}})
    (entry,) = load(tmp_path, tmp_path / "none", project_trusted=False).servers
    assert [entry.tool_exposure(t) for t in ("search_code", "get_issue", "get_me", "list")] == [
        "direct", "codemode", "hidden", "deferred"]
    assert entry.has_direct_tools()


def test_tool_names_follow_pi_16s_character_rules():
    assert tool_name("everything", "get-tiny-image") == "mcp__everything__get_tiny_image"
    assert tool_name("my-server", "get.thing/v2") == "mcp__my_server__get_thing_v2"
    long = tool_name("s" * 40, "t" * 40)
    assert len(long) == 64 and long.startswith("mcp__" + "s" * 40)
    # Two tools that would share a name both get the hash, whichever comes first.
    names = tool_names("srv", ["a-b", "a_b", "c"])
    assert names["c"] == "mcp__srv__c"
    assert names["a-b"] != names["a_b"] and all(n.startswith("mcp__srv__a_b_") for n in (names["a-b"], names["a_b"]))


def test_values_expand_variables_and_name_what_is_missing():
    env = {"TOKEN": "abc", "EMPTY": ""}
    assert resolve("Bearer ${TOKEN}", "x", env) == "Bearer abc"
    assert resolve("$TOKEN-$$-$!", "x", env) == "abc-$-!"
    assert resolve("!echo hi", "x", env) == "hi"
    with pytest.raises(UnresolvedValue, match=r'Failed to resolve MCP server "d" env "K" from environment '
                                              r"variables: MISSING, EMPTY"):
        resolve("${MISSING}${EMPTY}", 'MCP server "d" env "K"', env)


def test_add_and_remove_keep_the_rest_of_the_file_and_its_indentation(tmp_path):
    path = tmp_path / "mcp.json"
    path.write_text('{\n    "autoEnableCodemode": false,\n    "mcpServers": {"a": {"command": "x"}}\n}\n')
    assert add_server(path, "b", {"url": "https://b.example/mcp"}) is False
    assert add_server(path, "b", {"url": "https://c.example/mcp"}) is True
    data = json.loads(path.read_text())
    assert data == {"autoEnableCodemode": False,
                    "mcpServers": {"a": {"command": "x"}, "b": {"url": "https://c.example/mcp"}}}
    assert path.read_text().startswith('{\n    "autoEnableCodemode"')
    assert remove_server(path, "a") is True and remove_server(path, "a") is False
    assert remove_server(tmp_path / "none.json", "a") is False


def test_results_keep_text_images_and_the_structured_result():
    result = to_tool_result("srv", "t", {
        "content": [{"type": "text", "text": "hello"}, {"type": "image", "data": "AAAA", "mimeType": "image/jpeg"},
                    {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "inside"}},
                    {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}],
        "structuredContent": {"n": 1}, "isError": True, "_meta": {"x": 1}})
    assert result.is_error
    assert result.content == [TextContent("hello"), ImageContent(data="AAAA", mime_type="image/jpeg"),
                              TextContent("inside"), TextContent("[audio audio/wav omitted]")]
    assert result.details["result"]["structuredContent"] == {"n": 1} and "_meta" not in result.details["result"]
    only = to_tool_result("s", "t", {"content": [], "structuredContent": {"a": 1}})
    assert only.content == [TextContent('{\n  "a": 1\n}')]
    assert to_tool_result("s", "t", {"content": [], "isError": True}).content == [
        TextContent("MCP tool s/t returned an error")]


def test_a_result_over_20_kb_reaches_the_model_cut_in_the_middle_with_the_full_text_in_a_file():
    text = "".join(f"line {i:05d}\n" for i in range(5000))
    result = to_tool_result("s", "t", {"content": [{"type": "text", "text": text}]})
    (shown,) = result.content
    path = result.details["fullOutputPath"]
    try:
        assert open(path).read() == text
        assert shown.text.startswith("Warning: truncated output (original token count: 13750)\n"
                                     "Total output lines: 5000\n\nline 00000\n")
        assert "chars truncated…" in shown.text and f"[Full output: {path} (read it with offset/limit)]" in shown.text
        assert len(shown.text.encode()) < MAX_OUTPUT_BYTES + 500
        assert "line 04999" in shown.text and "line 02500" not in shown.text
        assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    finally:
        os.unlink(path)
