"""What using an MCP server costs ``pi -p`` at its end: with a server that ends the moment
its stdin closes (tests/support/mcp_bare_server.py), the exit takes about what it takes
without MCP (it used to take 0.2 s more: the interpreter's last garbage collections
walked the SDK's objects); a server that does not end on its own is stopped after pi
1.6's half-second grace, not the SDK's two."""

import json
import sys
import time
from pathlib import Path

import pytest

from support.cli import PiRunner
from support.llm_server import Reply
from support.programs import node_for, require_real

from .conftest import write_servers
from .test_exit_wait import exit_wait

pytestmark = [pytest.mark.process]

BARE = str(Path(__file__).resolve().parents[1] / "support" / "mcp_bare_server.py")


def runner_for(tmp_path, server, name, servers: dict | None) -> PiRunner:
    runner = PiRunner(tmp_path / name, server)
    (runner.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    if servers is not None:
        write_servers(runner.agent_dir / "mcp.json", servers)
    return runner


def used_once(server) -> None:
    server.push(Reply(tool_calls=[("mcp__bare__add", {"a": 2, "b": 3})]), Reply(text="done"))


def test_an_mcp_server_used_adds_little_to_the_exit_of_pi_print(tmp_path, server):
    ours = [sys.executable, "-m", "pi_plugins.cli"]
    plain = runner_for(tmp_path, server, "plain", None)
    with_mcp = runner_for(tmp_path, server, "mcp", {"bare": {"command": sys.executable, "args": [BARE],
                                                             "exposure": "direct"}})
    plain_exits, mcp_exits = [], []
    for _ in range(4):
        server.push(Reply(text="done"))
        answer, took = exit_wait(plain, ours)
        assert answer == "done"
        plain_exits.append(took)
        used_once(server)
        answer, took = exit_wait(with_mcp, ours)
        assert answer == "done"
        mcp_exits.append(took)
    # the fastest of each, as the load of the machine only ever adds (quiet: 0.03 s with
    # MCP, 0.06 s without; 0.17 s with MCP before the SDK's objects were frozen at exit)
    assert min(mcp_exits) < min(plain_exits) + 0.05, f"exits: with MCP {mcp_exits}, without {plain_exits}"


def stuck_exit(tmp_path, server, name, command) -> float:
    runner = runner_for(tmp_path, server, name, {"bare": {"command": sys.executable, "args": [BARE],
                                                          "env": {"IGNORE_EOF": "1"}, "exposure": "direct"}})
    used_once(server)
    began = time.monotonic()
    answer, took = exit_wait(runner, command)
    assert answer == "done", time.monotonic() - began
    return took


def test_a_server_that_does_not_end_when_its_input_closes_is_stopped_after_half_a_second(tmp_path, server):
    took = stuck_exit(tmp_path, server, "ours", [sys.executable, "-m", "pi_plugins.cli"])
    assert 0.45 < took < 1.6, f"exit took {took:.2f}s"


@pytest.mark.requires("pi16")
def test_pi16_also_stops_such_a_server_after_half_a_second(tmp_path, server):
    took = stuck_exit(tmp_path, server, "pi16", [node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js")])
    assert 0.45 < took < 1.6, f"pi 1.6: exit took {took:.2f}s"
