"""pi 1.6 and pi-harness on the same mcp.json, the same MCP server (ours, with a tool name
that has dashes) and the same scripted model: the tools each declares, and a call's round
trip, must match."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support.cli import PiRunner
from support.llm_server import Reply
from support.programs import node_for, require_real

from .conftest import SERVER, write_servers

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]


def run(runner, who, *args):
    if who == "pi16":
        command = [node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js")]
    else:
        command = [sys.executable, "-m", "pi_plugins.cli"]
    return subprocess.run([*command, *runner.flags(*args)], cwd=runner.cwd, env={**runner.env, "PI_OFFLINE": "1"},
                          capture_output=True, text=True, timeout=120)


def mcp_tools(request):
    return {t["function"]["name"]: t["function"] for t in request.body.get("tools", [])
            if t["function"]["name"].startswith("mcp__")}


def test_pi16_and_ours_declare_the_same_mcp_tools_and_both_round_trip_a_call(tmp_path, server):
    seen = {}
    for who in ("pi16", "ours"):
        runner = PiRunner(tmp_path / who, server)
        models = server.models_json("local", apiKey="test-key")  # pi 1.6 wants a key
        (runner.agent_dir / "models.json").write_text(json.dumps(models))
        write_servers(runner.agent_dir / "mcp.json", {"demo-srv": {
            "command": sys.executable, "args": [SERVER], "exposure": "direct",
            "toolExposure": {"crash": "hidden", "le*": "hidden"}}})
        server.push(Reply(tool_calls=[("mcp__demo_srv__get_tiny_image", {}), ("mcp__demo_srv__add", {"a": 1, "b": 2})]),
                    Reply(text="done"))
        done = run(runner, who, "--no-session", "-p", "call them")
        assert done.returncode == 0, f"{who}: {done.stderr[-2000:]}"
        assert done.stdout.strip() == "done"
        first, second = server.requests[-2:]
        results = [m for m in second.body["messages"] if m["role"] == "tool"]
        seen[who] = (mcp_tools(first), [m["content"] for m in results])
    theirs, ours = seen["pi16"], seen["ours"]
    assert sorted(ours[0]) == sorted(theirs[0])
    assert "mcp__demo_srv__get_tiny_image" in ours[0] and "mcp__demo_srv__crash" not in ours[0]
    for name, declared in theirs[0].items():
        assert ours[0][name]["description"] == declared["description"], name
        assert ours[0][name]["parameters"]["properties"] == declared["parameters"]["properties"], name
    text = [c if isinstance(c, str) else "".join(p.get("text", "") for p in c) for c in ours[1]]
    assert text == ["tiny", "3"]
    assert ours[1] == theirs[1], json.dumps(seen, indent=1)[:3000]


SCRIPT = ('const r = await Promise.all([tools.mcp__demo_srv__add({a: 1, b: 2}), tools.mcp__demo_srv__fail({}),\n'
          '  tools.mcp__demo_srv__get_tiny_image({})]);\n'
          'text(JSON.stringify(r)); return await describeNamespace("demo-srv")')


def test_a_codemode_script_calls_two_mcp_tools_at_once_and_both_results_come_back_as_pi16s(tmp_path, server):
    """Default (codemode) exposure: codemode is switched on for the server, the script's
    ``Promise.all`` gets every ``CallToolResult`` in one tool result, and
    ``describeNamespace()`` describes the server, as pi 1.6 does."""
    seen = {}
    for who in ("pi16", "ours"):
        runner = PiRunner(tmp_path / who, server)
        (runner.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
        write_servers(runner.agent_dir / "mcp.json", {"demo-srv": {
            "command": sys.executable, "args": [SERVER], "description": "Demo server for tests"}})
        server.push(Reply(tool_calls=[("codemode", {"code": SCRIPT}, "call_1")]), Reply(text="done"))
        done = run(runner, who, "--no-session", "-p", "go")
        assert done.returncode == 0, f"{who}: {done.stderr[-2000:]}"
        first, second = server.requests[-2:]
        declared = [t["function"]["name"] for t in first.body["tools"]]
        result = [m["content"] for m in second.body["messages"] if m["role"] == "tool"]
        seen[who] = (declared, [line for line in result[0].split("\n") if not line.startswith("Wall time")])
    assert "codemode" in seen["ours"][0] and not any(n.startswith("mcp__") for n in seen["ours"][0])
    assert seen["ours"] == seen["pi16"]
    output = "\n".join(seen["ours"][1])
    assert '"text":"3"' in output and '"isError":true' in output and '"text":"tiny"' in output
    assert '"name":"mcp__demo_srv","description":"Demo server for tests"' in output


def section_of(text: str) -> str:
    return text[text.index("<mcp_servers>"):text.index("</mcp_servers>") + len("</mcp_servers>")]


def session_entries(agent_dir):
    (path,) = list(agent_dir.glob("sessions/*/*.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_mcp_servers_section_and_its_update_are_worded_and_placed_as_pi16s(tmp_path, server):
    """The first request's system prompt ends with the section (no summary yet: the server
    had not connected). On the next prompt, once it has, pi 1.6 records the new section in
    the session as a ``system`` message before the prompt and, for a model that takes no
    system message mid-conversation (the default), sends the system prompt with the new
    section and no message about it: so do we."""
    seen = {}
    for who in ("pi16", "ours"):
        runner = PiRunner(tmp_path / who, server)
        models = server.models_json("local", apiKey="test-key")
        (runner.agent_dir / "models.json").write_text(json.dumps(models))
        write_servers(runner.agent_dir / "mcp.json", {
            "demo-srv": {"command": sys.executable, "args": [SERVER]},
            "slow": {"command": "sleep", "args": ["30"], "exposure": "deferred"}})
        server.push(Reply(text="one", delay=3.0), Reply(text="two"))
        done = run(runner, who, "-p", "go", "again")
        assert done.returncode == 0, f"{who}: {done.stderr[-2000:]}"
        first, second = server.requests[-2:]
        heads = [[m["content"] for m in r.body["messages"] if m["role"] in ("system", "developer")]
                 for r in (first, second)]
        assert all(len(h) == 1 for h in heads), f"{who}: {second.body['messages']}"
        conversation = [(m["role"], str(m["content"])) for m in second.body["messages"][1:]]
        messages = [e["message"] for e in session_entries(runner.agent_dir) if e["type"] == "message"]
        # (pi 1.6 also records its whole first system prompt as a system message of sections)
        updates = [(i, m["sections"]) for i, m in enumerate(messages)
                   if m["role"] == "system" and set(m.get("sections", {})) == {"mcp_servers"}]
        (at, sections), = updates
        seen[who] = (section_of(heads[0][0]), section_of(heads[1][0]), len(conversation), sections,
                     messages[at + 1]["role"], messages[at + 1]["content"][0]["text"])
    assert seen["ours"] == seen["pi16"]
    first_section, second_section, count, sections, after, prompt = seen["ours"]
    assert "- mcp__demo_srv (codemode)\n" in first_section
    assert "- mcp__demo_srv (codemode): Demo tools for the tests." in second_section
    assert count == 3 and sections == {"mcp_servers": second_section} and (after, prompt) == ("user", "again")


RESOURCE_TOOLS = ("list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource")
RESOURCE_CALLS = [("list_mcp_resources", {}), ("list_mcp_resources", {"server": "demo-srv"}),
                  ("list_mcp_resource_templates", {}), ("list_mcp_resource_templates", {"server": "demo-srv"}),
                  ("read_mcp_resource", {"server": "demo-srv", "uri": "demo://readme"}),
                  ("read_mcp_resource", {"server": "demo-srv", "uri": "demo://notes/tea"}),
                  ("read_mcp_resource", {"server": "demo-srv", "uri": "demo://dot.png"}),
                  ("read_mcp_resource", {"server": "nobody", "uri": "demo://readme"}),
                  ("read_mcp_resource", {"server": "demo-srv", "uri": "demo://missing"}),
                  ("list_mcp_resources", {"cursor": "abc"})]


def test_pi16_and_ours_declare_the_same_resource_tools_and_give_the_same_results(tmp_path, server):
    """A direct server with resources: both declare the three resource tools alike (names,
    descriptions, parameters), and each call's result reaches the model in the same words:
    the JSON listings (MCP App resources left out), text and image contents, errors."""
    seen = {}
    for who in ("pi16", "ours"):
        runner = PiRunner(tmp_path / who, server)
        (runner.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
        write_servers(runner.agent_dir / "mcp.json", {"demo-srv": {
            "command": sys.executable, "args": [SERVER], "exposure": "direct"}})
        server.push(Reply(tool_calls=RESOURCE_CALLS), Reply(text="done"))
        done = run(runner, who, "--no-session", "-p", "read them")
        assert done.returncode == 0, f"{who}: {done.stderr[-2000:]}"
        first, second = server.requests[-2:]
        declared = {t["function"]["name"]: t["function"] for t in first.body.get("tools", [])
                    if t["function"]["name"] in RESOURCE_TOOLS}
        seen[who] = (declared, [m["content"] for m in second.body["messages"] if m["role"] == "tool"])
    (theirs, their_results), (ours, our_results) = seen["pi16"], seen["ours"]
    assert sorted(ours) == sorted(theirs) == sorted(RESOURCE_TOOLS)
    for name, declared in theirs.items():
        assert ours[name]["description"] == declared["description"], name
        assert ours[name]["parameters"] == declared["parameters"], name
    assert len(our_results) == len(RESOURCE_CALLS)
    for call, mine, pi16 in zip(RESOURCE_CALLS, our_results, their_results, strict=True):
        assert mine == pi16, call
    listing = json.loads(our_results[0])
    assert [r["uri"] for r in listing["resources"]] == ["demo://readme", "demo://dot.png", "demo://data.bin"]


def test_mcp_tools_carry_the_servers_annotations_and_hidden_ones_are_unreachable_as_in_pi16(tmp_path, server):
    """pi 1.6's tool ``annotations``: an MCP tool carries the boolean hints its server
    declares, the resource tools are read-only, and a plugin sees them (``getAllTools()``);
    a ``hidden`` tool is listed so, and never declared."""
    extension = Path(__file__).parents[1] / "fixtures" / "pi16_extension_events" / "tool_annotations"
    seen = {}
    for who in ("pi16", "ours"):
        runner = PiRunner(tmp_path / who, server)
        (runner.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
        write_servers(runner.agent_dir / "mcp.json", {"demo-srv": {
            "command": sys.executable, "args": [SERVER], "exposure": "direct", "resources": True,
            "toolExposure": {"crash": "hidden"}}})
        log = tmp_path / f"{who}-tools.json"
        runner.env["TOOLS_LOG"] = str(log)
        server.push(Reply(text="done"))
        done = run(runner, who, "-e", f"{extension}.{'ts' if who == 'pi16' else 'py'}", "--no-session", "-p", "hi")
        assert done.returncode == 0, f"{who}: {done.stderr[-2000:]}"
        seen[who] = json.loads(log.read_text())
        assert "mcp__demo_srv__crash" not in mcp_tools(server.requests[-1]), who
    assert seen["ours"] == seen["pi16"]
    assert seen["ours"]["mcp__demo_srv__add"]["annotations"] == {
        "readOnlyHint": True, "idempotentHint": True, "openWorldHint": False}
    assert seen["ours"]["list_mcp_resources"]["annotations"] == {"readOnlyHint": True}
    assert seen["ours"]["mcp__demo_srv__crash"] == {"exposure": "hidden", "annotations": None}
