"""Virtual models side by side with pi 1.6 (on Node 22) against the scripted server: the
same router (``router.ts`` there, ``router.py`` here) over the same two models. Compared:
the ``--list-models`` row, which request reached which model, and the session each wrote
(the selection, the router state entries, the physical model and level on each answer),
across a ``-c`` resume."""

from __future__ import annotations

import json
import subprocess

import pytest

from support.fixtures import FIXTURES
from support.llm_server import Reply

pytestmark = [pytest.mark.process]

HERE = FIXTURES / "virtual_models"
LONG = "a prompt of more than twenty characters"


def setup(pi, server):
    document = server.models_json("local", apiKey="test-key", models=[
        {"id": "small-model", "reasoning": True}, {"id": "big-model", "reasoning": False}])
    (pi.agent_dir / "models.json").write_text(json.dumps(document))


def run(who, pi, *args):
    if who == "pi16":
        from support.programs import node_for, require_real

        command = [node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js"), "-e", str(HERE / "router.ts")]
    else:
        command = [*pi.command()[:3], "-e", str(HERE / "router.py")]
    done = subprocess.run([*command, *args], cwd=pi.cwd, env={**pi.env, "PI_OFFLINE": "1"},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{who}: {done.stderr}"
    return done.stdout


def session_shape(pi) -> list:
    """Each entry of the one session, without ids, times and the system message's text."""
    [path] = pi.sessions()
    shape = []
    for entry in map(json.loads, path.read_text().splitlines()):
        kind = entry["type"]
        if kind == "message":
            message = entry["message"]
            if message["role"] == "system":
                continue  # pi 1.6's leading system message is another feature's
            shape.append((message["role"], message.get("provider"), message.get("model"),
                          message.get("thinkingLevel")))
        elif kind == "model_change":
            shape.append((kind, entry["provider"], entry["modelId"]))
        elif kind == "thinking_level_change":
            shape.append((kind, entry["thinkingLevel"]))
        elif kind == "custom":
            shape.append((kind, entry["customType"], json.dumps(entry["data"], sort_keys=True)))
        elif kind != "session":
            shape.append((kind,))
    return shape


def test_list_models_shows_the_virtual_model_as_pi16_does(pi, server):
    setup(pi, server)
    ours = run("ours", pi, "--list-models", "auto")
    assert ours.splitlines()[1].split() == ["router", "auto", "0", "0", "yes", "yes"]


@pytest.mark.requires("pi16")
def test_list_models_row_matches_pi16(pi, server):
    setup(pi, server)
    rows = {who: run(who, pi, "--list-models").splitlines() for who in ("pi16", "ours")}
    assert rows["ours"] == rows["pi16"]


@pytest.mark.requires("pi16")
def test_the_session_records_what_pi16_records(pi, server):
    setup(pi, server)
    seen, shapes = {}, {}
    for who in ("pi16", "ours"):
        for path in pi.sessions():
            path.unlink()
        before = len(server.requests)
        server.push(Reply(text="short answer"), Reply(text="long answer"))
        run(who, pi, "--model", "router/auto:high", "-p", "hi")
        run(who, pi, "--model", "router/auto", "-c", "-p", LONG)
        seen[who] = [r.model for r in server.requests[before:]]
        shapes[who] = session_shape(pi)
    assert seen["ours"] == seen["pi16"] == ["small-model", "big-model"]
    assert shapes["ours"] == shapes["pi16"]
    assert ("custom", "pi.virtual-model-state", '{"modelId": "auto", "provider": "router", "state": {"count": 2}}') \
        in shapes["ours"]


@pytest.mark.requires("pi16")
def test_the_json_stream_announces_the_router_state_as_pi16_does(pi, server):
    setup(pi, server)
    announced = {}
    for who in ("pi16", "ours"):
        server.push(Reply(text="short answer"))
        events = [json.loads(line) for line in run(who, pi, "--model", "router/auto", "--mode", "json",
                                                   "--no-session", "-p", "hi").splitlines() if line.strip()]
        announced[who] = [(e["entry"]["type"], e["entry"]["customType"], e["entry"]["data"])
                          for e in events if e["type"] == "entry_appended"]
        answer = next(e["message"] for e in events if e["type"] == "message_end"
                      and e["message"]["role"] == "assistant")
        assert (answer["model"], answer["thinkingLevel"]) == ("small-model", "medium"), who
    assert announced["ours"] == announced["pi16"] == [
        ("custom", "pi.virtual-model-state", {"provider": "router", "modelId": "auto", "state": {"count": 1}})]
