"""The BM25 ranking ``tool_search`` and codemode's ``searchTools()`` share: what ranks
first for a query, and the same order as pi 1.6's own ranker on the same tools."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from pi_core import Tool
from pi_plugins.tool_search.ranking import rank, ranked, tokenize
from support.programs import NODE22, PI16

PI16_RANK = Path(__file__).parent / "pi16_rank.mjs"


def spec(name: str, description: str = "", properties: dict | None = None, **extra) -> dict:
    return {"name": name, "description": description,
            "parameters": {"type": "object", "properties": properties or {}}, **extra}


TOOLS = [
    spec("mcp__github__list_issues", "List issues in a repository.",
         {"owner": {"type": "string"}, "repo": {"type": "string"}, "state": {"type": "string"}}),
    spec("mcp__github__create_pull_request", "Open a new pull request.",
         {"title": {"type": "string"}, "body": {"type": "string", "description": "Markdown text"}}),
    spec("mcp__time__get_current_time", "Get the current time in a time zone.",
         {"timezone": {"type": "string", "description": "IANA zone name such as Europe/Paris"}}),
    spec("mcp__time__convert_time", "Convert a time between time zones.",
         {"source_timezone": {"type": "string"}, "time": {"type": "string"}}),
    spec("mcp__fs__read_text_file", "Read a file as text. Use for reading source files.",
         {"path": {"type": "string"}, "head": {"type": "number", "description": "first N lines"}}),
    spec("mcp__peekaboo__window", "Move, resize or close a window.", {"title": {"type": "string"}}),
    spec("mcp__peekaboo__capture", "Take a screenshot of a window or the screen.",
         {"target": {"type": "string"}}),
    spec("mcp__peekaboo__app", "Launch or quit an application.", {"name": {"type": "string"}}),
]


def names(query: str, tools=TOOLS, limit: int = 8) -> list[str]:
    return [tool["name"] if isinstance(tool, dict) else tool.name for tool in rank(query, tools, limit)]


def test_words_split_at_identifier_boundaries_lowercased_singular_without_stop_words():
    assert tokenize("getHTTPResponse for the list_issues") == ["get", "http", "response", "list", "issue"]
    assert tokenize("searches boxes classes entries") == ["search", "box", "class", "entry"]
    assert tokenize("gas is tools") == ["gas", "tool"]  # three letters keep their s; 'is' is a stop word


def test_a_name_match_ranks_above_mentions_in_descriptions():
    assert names("issues")[0] == "mcp__github__list_issues"
    assert set(names("time zone")[:2]) == {"mcp__time__get_current_time", "mcp__time__convert_time"}


def test_parameter_names_and_descriptions_are_searched():
    assert names("markdown") == ["mcp__github__create_pull_request"]
    assert names("head lines") == ["mcp__fs__read_text_file"]


def test_parameter_text_is_read_through_local_refs():
    tool = spec("lookup", "Look something up.", {"item": {"$ref": "#/$defs/Item"}})
    tool["parameters"]["$defs"] = {"Item": {"type": "object", "description": "a warehouse sku",
                                            "properties": {"barcode": {"type": "string"}}}}
    assert names("barcode", [tool, spec("other", "unrelated")]) == ["lookup"]


def test_a_tool_matching_more_query_terms_ranks_first_whatever_the_scores():
    assert names("screenshot window")[0] == "mcp__peekaboo__capture"


def test_a_query_that_is_exactly_a_tools_name_ranks_it_first():
    assert names("convert_time")[0] == "mcp__time__convert_time"
    assert names("time__convert_time")[0] == "mcp__time__convert_time"


def test_the_whole_local_name_in_the_query_earns_a_bonus():
    assert names("peekaboo app")[0] == "mcp__peekaboo__app"


def test_namespace_text_helps_find_the_server():
    tools = [spec("mcp__radius__query", "Run a query.", namespace={"name": "radius", "description": "Billing data"}),
             spec("mcp__other__query", "Run a query.")]
    assert names("billing query", tools) == ["mcp__radius__query", "mcp__other__query"]


def test_limit_no_match_and_empty_queries():
    assert len(rank("time", TOOLS, 1)) == 1
    assert rank("kangaroo", TOOLS, 8) == []
    assert rank("the of and", TOOLS, 8) == []
    assert rank("time", TOOLS, 0) == []
    assert rank("time", [], 8) == []


def test_core_tools_are_ranked_by_their_json_schema():
    grep = Tool(name="grep", description="Search file contents for a pattern.",
                parameters={"type": "object", "properties": {"pattern": {"type": "string"},
                                                             "ignoreCase": {"type": "boolean"}}})
    ls = Tool(name="ls", description="List directory contents.")
    assert rank("ignore case", [ls, grep], 8) == [grep]
    assert [m.name for m in ranked("directory", [ls, grep])] == ["ls"]


def test_non_ascii_text_is_searched_by_its_characters():
    tools = [spec("suche", "Dateien durchsuchen und öffnen"), spec("搜索", "搜索文件")]
    assert names("öffnen", tools) == ["suche"]
    assert names("文件", tools) == ["搜索"]


@pytest.mark.requires("pi16")
@pytest.mark.process
def test_same_order_as_pi16s_ranker():
    queries = ["issues", "time zone", "screenshot window", "peekaboo app", "convert_time", "read source file",
               "pull request markdown", "list", "close the window", "get time"]
    done = subprocess.run([str(NODE22), str(PI16_RANK)], input=json.dumps({"tools": TOOLS, "queries": queries,
                                                                            "limit": 8}),
                          capture_output=True, text=True, timeout=60, env={**os.environ, "PI16_PACKAGE": str(PI16)})
    assert done.returncode == 0, done.stderr
    theirs = json.loads(done.stdout)
    for query, expected in zip(queries, theirs, strict=True):
        ours = ranked(query, TOOLS, 8)
        assert [m.name for m in ours] == [m["name"] for m in expected], query
        assert [round(m.score, 9) for m in ours] == [round(m["score"], 9) for m in expected], query
