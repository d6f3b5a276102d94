"""The MCP resource tools (``list_mcp_resources``, ``list_mcp_resource_templates``,
``read_mcp_resource``) against our test server, through a real harness and the scripted
model: registered once a server with resources connects, with the widest exposure of
those servers, MCP App resources left out, and scripts given the JSON payloads."""

import asyncio
import json
import pathlib
import re
import sys

import pytest

import pi_plugins.codemode as codemode_plugin
import pi_plugins.mcp as mcp_plugin
from pi_core import ImageContent, text_of
from pi_core.testing import RecordingUI, Reply

from .conftest import SERVER, write_servers

pytestmark = pytest.mark.process  # every test starts a server process

RESOURCE_TOOLS = ["list_mcp_resource_templates", "list_mcp_resources", "read_mcp_resource"]


def entry(**extra) -> dict:
    return {"command": sys.executable, "args": [SERVER], **extra}


def results(harness):
    return [m for m in harness.messages if m.role == "toolResult"]


def run(harness, script, *plugins, prompts=("go",)):
    async def scenario():
        h = await harness(*plugins, mcp_plugin, script=script, ui=RecordingUI(), session="memory")
        running = mcp_plugin.servers_of(h.ctx)
        await running.wait_for(None)
        tools = {t.name: t for t in h.ctx.get_all_tools()}
        for prompt in prompts:
            await h.prompt(prompt)
        await h.close()
        return h, tools

    return asyncio.run(scenario())


def test_resources_are_listed_read_and_templated_as_pi16_gives_them(tmp_path, agent, harness):
    write_servers(agent / "mcp.json", {"demo": entry(exposure="direct")})
    script = [Reply(tool_calls=[("list_mcp_resources", {}), ("list_mcp_resources", {"server": "demo"}),
                                ("list_mcp_resource_templates", {}),
                                ("read_mcp_resource", {"server": "demo", "uri": "demo://readme"}),
                                ("read_mcp_resource", {"server": "demo", "uri": "demo://notes/tea"}),
                                ("read_mcp_resource", {"server": "demo", "uri": "demo://dot.png"}),
                                ("read_mcp_resource", {"server": "demo", "uri": "demo://data.bin"})]),
              Reply(text="read")]
    h, tools = run(harness, script)
    declared = sorted(t.name for t in harness.provider.requests[0].tools)
    assert [n for n in declared if not n.startswith("mcp__")] == RESOURCE_TOOLS
    assert tools["read_mcp_resource"].parameters["required"] == ["server", "uri"]
    every, one, templates, readme, note, image, binary = results(h)
    listed = json.loads(text_of(every.content))
    assert [r["uri"] for r in listed["resources"]] == ["demo://readme", "demo://dot.png", "demo://data.bin"]
    assert listed["resources"][0] == {"server": "demo", "name": "readme", "uri": "demo://readme",
                                      "description": "What the demo server is for.", "mimeType": "text/plain"}
    assert "server" not in listed and "errors" not in listed
    assert json.loads(text_of(one.content)) == {"server": "demo", **listed}
    assert json.loads(text_of(templates.content)) == {"resourceTemplates": [
        {"server": "demo", "name": "note", "uriTemplate": "demo://notes/{name}", "description": "A note by name.",
         "mimeType": "text/plain"}]}
    assert text_of(readme.content) == "The demo server answers the MCP tests."
    assert readme.details["structuredContent"] == {"server": "demo", "uri": "demo://readme", "contents": [
        {"uri": "demo://readme", "mimeType": "text/plain", "text": "The demo server answers the MCP tests."}]}
    assert text_of(note.content) == "Note tea."
    assert isinstance(image.content[0], ImageContent) and image.content[0].mime_type == "image/png"
    saved = re.fullmatch(r"\[Binary resource demo://data.bin \(application/octet-stream, 16B\) saved to (\S+)\]",
                         text_of(binary.content))
    assert saved and pathlib.Path(saved.group(1)).read_bytes() == bytes(range(16))
    assert not any(r.is_error for r in results(h))


def test_bad_arguments_and_unknown_resources_are_one_line_errors(tmp_path, agent, harness):
    write_servers(agent / "mcp.json", {"demo": entry(exposure="direct"), "quiet": entry(exposure="hidden")})
    script = [Reply(tool_calls=[("read_mcp_resource", {"server": "quiet", "uri": "demo://readme"}),
                                ("read_mcp_resource", {"server": "demo", "uri": "demo://missing"}),
                                ("list_mcp_resources", {"cursor": "abc"}),
                                ("read_mcp_resource", {"server": " ", "uri": "demo://readme"})]),
              Reply(text="done")]
    h, _ = run(harness, script)
    hidden, missing, cursor, blank = results(h)
    assert all(r.is_error for r in (hidden, missing, cursor, blank))
    assert text_of(hidden.content) == 'MCP server "quiet" has no resources. Servers with resources: demo'
    assert text_of(missing.content) == 'Unknown resource: demo://missing'
    assert text_of(cursor.content) == "cursor can only be used when a server is specified"
    assert text_of(blank.content) == "server must be provided"
    assert h.messages[-1].text == "done"


@pytest.mark.parametrize(("exposures", "expected"), [
    (("codemode", "direct"), "direct"), (("deferred", "codemode"), "codemode"), (("deferred", "hidden"), "deferred")])
def test_the_resource_tools_take_the_widest_exposure_of_the_servers_with_resources(tmp_path, agent, harness,
                                                                                  exposures, expected):
    write_servers(agent / "mcp.json", {f"s{i}": entry(exposure=e) for i, e in enumerate(exposures)})
    h, tools = run(harness, [Reply(text="hi")])
    assert {tools[name].exposure for name in RESOURCE_TOOLS} == {expected}
    declared = {t.name for t in harness.provider.requests[0].tools}
    assert (set(RESOURCE_TOOLS) <= declared) == (expected == "direct")


def test_no_resource_tools_without_a_server_that_has_resources(tmp_path, agent, harness):
    write_servers(agent / "mcp.json", {"quiet": entry(exposure="hidden")})
    _, tools = run(harness, [Reply(text="hi")])
    assert not set(RESOURCE_TOOLS) & set(tools)


SCRIPT = ('const [listed, read] = await Promise.all([tools.list_mcp_resources({server: "demo"}),\n'
          '  tools.read_mcp_resource({server: "demo", uri: "demo://notes/tea"})]);\n'
          'return {uris: listed.resources.map((r) => r.uri), read}')


def test_a_codemode_script_gets_the_listing_and_the_read_contents_as_values(tmp_path, agent, harness):
    write_servers(agent / "mcp.json", {"demo": entry()})
    script = [Reply(tool_calls=[("codemode", {"code": SCRIPT})]), Reply(text="done")]
    h, tools = run(harness, script, codemode_plugin)
    assert tools["read_mcp_resource"].exposure == "codemode"
    (result,) = results(h)
    text = text_of(result.content)
    assert text.startswith("Script completed"), text
    value = json.loads(text[text.index("{"):text.rindex("}") + 1])
    assert value == {"uris": ["demo://readme", "demo://dot.png", "demo://data.bin"], "read": {
        "server": "demo", "uri": "demo://notes/tea",
        "contents": [{"uri": "demo://notes/tea", "mimeType": "text/plain", "text": "Note tea."}]}}
