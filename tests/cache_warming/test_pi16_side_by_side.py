"""Cache warming beside the real pi 1.6: the same ``pi -p`` run by both against the
scripted server, a model whose cache lives 11 s (so each refreshes 1 s after a request)
and a tool that runs 1.5 s, long enough for one refresh while the run streams. Both send
the same refresh (the last request again, capped at one output token) and write the
same ``usage`` entry of kind ``cache_warm``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.llm_server import ANTHROPIC, COMPLETIONS, Reply
from support.programs import node_for, require_real

pytestmark = [pytest.mark.requires("pi16"), pytest.mark.process]

MODEL = {"id": "warm-model", "name": "Warm Model", "contextWindow": 200000, "maxTokens": 8192,
         "promptCache": {"short": 11}, "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}
PROMPT = {"input": 40_000, "output": 5, "cache_read": 0, "cache_write": 0, "reasoning": 0}
HIT = {"input": 0, "output": 1, "cache_read": 40_000, "cache_write": 0, "reasoning": 0}


def one_token_cap(body: dict) -> bool:
    return body.get("max_tokens") == 1 or body.get("max_completion_tokens") == 1


def answer(request) -> Reply:
    """A refresh gets a cache hit; the first request a slow tool call; after it, done."""
    body = request.body
    if one_token_cap(body):
        return Reply(text=".", usage=HIT)
    if "tool_result" in json.dumps(body["messages"][-1]) or body["messages"][-1]["role"] == "tool":
        return Reply(text="done", usage=PROMPT)
    return Reply(tool_calls=[("bash", {"command": "sleep 1.5"})], usage=PROMPT)


def run(who: str, tmp_path: Path, server, api: str) -> tuple[list, list[dict], list[dict]]:
    """The requests ``who`` sent, the lines of its session file and its JSON events."""
    folder = tmp_path / who
    agent = folder / "agent"
    agent.mkdir(parents=True)
    (agent / "models.json").write_text(json.dumps(server.models_json("local", api=api, models=[MODEL],
                                                                      apiKey="test-key")))
    env = {"PATH": os.environ["PATH"], "HOME": str(folder / "home"), "PI_OFFLINE": "1",
           "PI_CODING_AGENT_DIR": str(agent)}
    command = ([node_for("pi16"), str(Path(require_real("pi16")) / "dist" / "cli.js")] if who == "pi"
               else [sys.executable, "-m", "pi_plugins.cli"])
    first = len(server.requests)
    done = subprocess.run([*command, "--model", "local/warm-model", "--mode", "json", "-p", "run it"], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, f"{who}: {done.stderr}"
    [session] = (agent / "sessions").rglob("*.jsonl")
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return server.requests[first:], [json.loads(line) for line in session.read_text().splitlines()], events


@pytest.mark.parametrize("api", [COMPLETIONS, ANTHROPIC])
def test_a_long_tool_run_gets_the_same_refresh_and_usage_entry_as_pi16(tmp_path, server, api):
    server.default = answer
    theirs, their_lines, their_events = run("pi", tmp_path, server, api)
    ours, our_lines, our_events = run("ours", tmp_path, server, api)
    for requests in (theirs, ours):
        kinds = ["refresh" if one_token_cap(r.body) else "request" for r in requests]
        # one refresh a second from the first at 1 s; a loaded machine may fit a second one in
        assert kinds[0] == kinds[-1] == "request" and set(kinds[1:-1]) == {"refresh"}, kinds
    their_refresh, our_refresh = theirs[1].body, ours[1].body
    assert their_refresh["messages"] == theirs[0].body["messages"]  # the request again, as sent
    assert our_refresh["messages"] == ours[0].body["messages"]
    same_keys = sorted(set(their_refresh) & set(our_refresh))
    assert sorted(their_refresh) == sorted(our_refresh), (sorted(their_refresh), sorted(our_refresh))
    for key in ("max_tokens", "max_completion_tokens", "stream", "model"):
        if key in same_keys:
            assert our_refresh[key] == their_refresh[key], key

    def warm_entries(lines: list[dict]) -> list[dict]:
        return [line for line in lines if line["type"] == "usage"]

    their_entry, our_entry = warm_entries(their_lines)[0], warm_entries(our_lines)[0]
    assert len(warm_entries(their_lines)) == len(theirs) - 2 and len(warm_entries(our_lines)) == len(ours) - 2
    assert sorted(our_entry) == sorted(their_entry)
    for key in ("kind", "provider", "model"):
        assert our_entry[key] == their_entry[key]
    assert our_entry["usage"]["cacheRead"] == their_entry["usage"]["cacheRead"] == 40_000
    assert our_entry["usage"]["cost"]["total"] == pytest.approx(their_entry["usage"]["cost"]["total"])
    # where it hangs: after the tool call's answer, before the tool's result (pi 1.6's own
    # session system message is another matter: docs/pi-compatibility.md)
    for lines in (their_lines, our_lines):
        order = [line.get("message", {}).get("role") or line.get("kind") or line["type"] for line in lines
                 if line["type"] in ("message", "usage") and line.get("message", {}).get("role") != "system"]
        warms = order.count("cache_warm")
        assert order == ["user", "assistant", *["cache_warm"] * warms, "toolResult", "assistant"], order

    # and announced on the JSON stream as the file holds it (entry_appended)
    def announced(events: list[dict]) -> list[dict]:
        return [e["entry"] for e in events if e["type"] == "entry_appended" and e["entry"]["type"] == "usage"]

    their_event, our_event = announced(their_events)[0], announced(our_events)[0]
    assert sorted(our_event) == sorted(their_event)
    assert our_event == our_entry
