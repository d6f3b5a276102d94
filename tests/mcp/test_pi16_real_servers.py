"""pi 1.6 and pi-harness on one mcp.json naming the real MCP servers .ci/run installs
(npm's server-everything, server-memory and server-filesystem, PyPI's mcp-server-time),
the same scripted model: the tools declared to it match, name for name and schema for
schema, and one call per server comes back the same from both."""

import json

import pytest
from support.cli import PiRunner
from support.llm_server import Reply
from support.programs import mcp_server

from .conftest import write_servers
from .test_pi16_side_by_side import RESOURCE_TOOLS, run

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]


def servers(files, memory) -> dict:
    return {
        "everything": {"command": mcp_server("everything"), "exposure": "direct"},
        "memory": {"command": mcp_server("memory"), "exposure": "direct", "env": {"MEMORY_FILE_PATH": str(memory)}},
        "filesystem": {"command": mcp_server("filesystem"), "args": [str(files)], "exposure": "direct"},
        "time": {"command": mcp_server("time"), "args": ["--local-timezone", "UTC"], "exposure": "direct"},
    }


def calls(files) -> list:
    return [("mcp__everything__echo", {"message": "hello from pi"}),
            ("mcp__memory__create_entities", {"entities": [
                {"name": "pi", "entityType": "agent", "observations": ["speaks MCP"]}]}),
            ("mcp__filesystem__read_text_file", {"path": str(files / "note.txt")}),
            ("mcp__time__convert_time", {"source_timezone": "UTC", "time": "12:00",
                                         "target_timezone": "Asia/Tokyo"})]


def test_pi16_and_ours_declare_the_same_tools_of_real_servers_and_each_call_round_trips(tmp_path, server):
    seen = {}
    for who in ("pi16", "ours"):
        runner = PiRunner(tmp_path / who, server)
        files = runner.cwd  # both offer the session's folder as the root, which server-filesystem then allows
        (files / "note.txt").write_text("a note for both\n")
        (runner.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
        write_servers(runner.agent_dir / "mcp.json", servers(files, tmp_path / who / "memory.jsonl"))
        server.push(Reply(tool_calls=calls(files)), Reply(text="done"))
        done = run(runner, who, "--no-session", "-p", "use them")
        assert done.returncode == 0, f"{who}: {done.stderr[-2000:]}"
        assert done.stdout.strip() == "done"
        first, second = server.requests[-2:]
        declared = {t["function"]["name"]: t["function"] for t in first.body.get("tools", [])
                    if t["function"]["name"].startswith("mcp__") or t["function"]["name"] in RESOURCE_TOOLS}
        results = [m["content"] for m in second.body["messages"] if m["role"] == "tool"]
        seen[who] = (declared, results)
    (theirs, their_results), (ours, our_results) = seen["pi16"], seen["ours"]
    assert sorted(ours) == sorted(theirs), (sorted(set(ours) - set(theirs)), sorted(set(theirs) - set(ours)))
    for prefix in ("mcp__everything__", "mcp__memory__", "mcp__filesystem__", "mcp__time__"):
        assert any(name.startswith(prefix) for name in ours), prefix
    for name, declared in theirs.items():
        assert ours[name]["description"] == declared["description"], name
        assert ours[name]["parameters"] == declared["parameters"], name
    for call, mine, pi16 in zip(calls(tmp_path), our_results, their_results, strict=True):
        assert mine == pi16, call[0]
    echo, created, read, converted = [c if isinstance(c, str) else json.dumps(c) for c in our_results]
    assert "hello from pi" in echo and '"speaks MCP"' in created and read.strip() == "a note for both"
    assert "Asia/Tokyo" in converted
