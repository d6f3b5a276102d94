"""``tool_search`` side by side with pi 1.6 (on Node 22) against the scripted server: the
same deferred tools (an extension there, a plugin here), the same script. Compared: how
``tool_search`` is declared, what the request after a search declares, what the model
reads back, and the tool-change entry each writes in the session."""

from __future__ import annotations

import json
import subprocess

import pytest

from support.fixtures import FIXTURES
from support.llm_server import Reply

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]

HERE = FIXTURES / "tool_search"


def pi16(runner, *args):
    from support.programs import node_for, require_real

    package = require_real("pi16")
    return subprocess.run([node_for("pi16"), str(package / "dist" / "cli.js"), *runner.flags(*args)],
                          cwd=runner.cwd, env={**runner.env, "PI_OFFLINE": "1"}, capture_output=True,
                          text=True, timeout=120)


def script(server):
    server.push(Reply(tool_calls=[("tool_search", {"query": "weather forecast"})]),
                Reply(tool_calls=[("weather_forecast", {"city": "Paris"})]),
                Reply(text="done"))


def tools_of(request) -> dict:
    """Declared tools by name (without ``strict``, which the two providers send differently)."""
    return {t["function"]["name"]: {k: v for k, v in t["function"].items() if k != "strict"}
            for t in request.body.get("tools", [])}


def tool_messages(request) -> list:
    return [m["content"] for m in request.body["messages"] if m["role"] == "tool"]


def tool_changes(runner) -> list:
    found = []
    for path in sorted((runner.agent_dir / "sessions").rglob("*.jsonl")):
        for line in path.read_text().splitlines():
            message = json.loads(line).get("message", {})
            if message.get("role") == "system" and "sections" not in message:
                found.append({k: v for k, v in message.items() if k != "timestamp"})
    return found


def test_tool_search_is_declared_and_loads_as_pi16_does(pi, server, tmp_path):
    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    runs = {}
    for who in ("pi16", "ours"):
        script(server)
        if who == "pi16":
            done = pi16(pi, "-e", str(HERE / "deferred.ts"), "--tools", "+tool_search", "-p", "hi")
        else:
            done = pi.run("-e", str(HERE / "deferred_tools.py"), "--tools", "+tool_search", "-p", "hi")
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "done"
        runs[who] = (server.requests[-3:], tool_changes(pi))
        for path in (pi.agent_dir / "sessions").rglob("*.jsonl"):
            path.unlink()
    (theirs, their_changes), (ours, our_changes) = runs["pi16"], runs["ours"]
    assert tools_of(ours[0])["tool_search"] == tools_of(theirs[0])["tool_search"]
    assert set(tools_of(ours[0])) == set(tools_of(theirs[0]))
    assert set(tools_of(ours[1])) == set(tools_of(theirs[1])) == set(tools_of(theirs[0])) | {"weather_forecast"}
    assert tools_of(ours[1])["weather_forecast"] == tools_of(theirs[1])["weather_forecast"]
    assert tool_messages(ours[1]) == tool_messages(theirs[1])
    assert tool_messages(ours[2]) == tool_messages(theirs[2])
    assert our_changes == their_changes and len(our_changes) == 1


@pytest.mark.parametrize("first", ["pi16", "ours"])
def test_each_resumes_the_others_loaded_tools(pi, server, first):
    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))

    def run(who, *args):
        if who == "pi16":
            return pi16(pi, "-e", str(HERE / "deferred.ts"), "--tools", "+tool_search", *args)
        return pi.run("-e", str(HERE / "deferred_tools.py"), "--tools", "+tool_search", *args)

    script(server)
    assert run(first, "-p", "hi").returncode == 0
    server.push(Reply(text="again"))
    done = run("ours" if first == "pi16" else "pi16", "-c", "-p", "more")
    assert done.returncode == 0, done.stderr
    assert "weather_forecast" in tools_of(server.requests[-1])
    assert "stock_quote" not in tools_of(server.requests[-1])
