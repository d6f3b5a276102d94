"""pi 1.6's tool ``namespace`` (with ``aliases``), ``output_schema`` and ``reaches_tools``
as codemode scripts and the MCP plugin see them (docs/plugins.md, "Tools and their hooks")."""

from __future__ import annotations

import json

import pytest
from support.codemode_scripts import output_of, results

import pi_plugins.codemode as codemode
from pi_core import ToolResult, tool
from pi_plugins.codemode.tool import names_namespace
from pi_plugins.mcp.servers import McpServers, Server
from pi_plugins.tool_search.tool import make_tool as make_tool_search

DOCS = {"name": "mcp__docs", "aliases": ["my-docs"], "description": "The manuals", "instructions": "Search first."}


@tool(parameters={"type": "object", "properties": {"q": {"type": "string"}}}, namespace=DOCS)
def lookup(args, run):
    """Look a page up in the manuals."""
    return "page"


@tool(parameters={"type": "object", "properties": {}},
      output_schema={"type": "object", "properties": {"count": {"type": "number"}}, "required": ["count"]})
def tally(args, run):
    """Count the things, as data."""
    return ToolResult(content=[], structured_content={"count": 3}, is_error=True)


@pytest.mark.process
def test_a_namespace_is_found_by_its_name_its_aliases_and_their_script_identifiers(tmp_path):
    by_alias, by_identifier, by_name, searched = results(
        tmp_path, "return await describeNamespace('my-docs')", "return await describeNamespace('my_docs')",
        "return (await describeNamespace('mcp__docs')).name",
        "return (await searchTools('page', {namespace: 'my_docs'})).map((t) => t.name)", tools=[lookup, tally])
    described = json.loads(output_of(by_alias).removeprefix("Output:\n\n"))
    assert described == {"name": "mcp__docs", "description": "The manuals", "instructions": "Search first.",
                         "tools": ["lookup"]}
    assert output_of(by_identifier) == output_of(by_alias)
    assert output_of(by_name) == "Output:\n\nmcp__docs"
    assert output_of(searched) == 'Output:\n\n["lookup"]'


@pytest.mark.process
def test_a_tool_with_an_output_schema_resolves_to_its_structured_content_and_declares_its_type(tmp_path):
    value, described = results(tmp_path, "return await tools.tally({})", "return await describeTool('tally')",
                               tools=[lookup, tally])
    assert output_of(value) == 'Output:\n\n{"count":3}'  # an error result that carries data still gives it
    assert "Promise<{" in described and "count: number;" in described


def test_a_namespace_name_matches_as_written_or_as_the_same_identifier_only():
    assert names_namespace(DOCS, "my-docs") and names_namespace(DOCS, "my_docs")
    assert names_namespace(DOCS, "mcp__docs") and not names_namespace(DOCS, "docs")


def test_codemode_and_tool_search_declare_which_tools_a_call_reaches():
    reaches = codemode.TOOL.reaches_tools
    assert reaches({"code": "return await searchTools('x')"}) == "all"
    assert reaches({"code": "await tools.mcp__docs__find({q: 1})"}) == ["1", "await", "mcp__docs__find", "q",
                                                                          "tools"]
    assert make_tool_search(lambda ctx, tools: None).reaches_tools({"query": "x"}) == "all"


def test_the_mcp_plugin_waits_for_the_servers_a_calls_words_reach():
    class Entry:
        def __init__(self, name):
            self.name = name

    servers = McpServers.__new__(McpServers)
    servers.servers = [Server(entry=Entry("docs")), Server(entry=Entry("my-db"))]  # type: ignore[arg-type]
    reaches = codemode.TOOL.reaches_tools
    assert servers.reached_by("codemode", {"code": "tools.mcp__my_db__q()"}, reaches) == ["my-db"]
    assert servers.reached_by("codemode", {"code": "ALL_TOOLS"}, reaches) is None
    assert servers.reached_by("my_tool", {}, lambda args: 1 / 0) is None  # a broken declaration: wait for all
    assert servers.reached_by("mcp__docs__x", {}) == ["docs"]
