"""A project whose mcp.json names our test server (tests/support/mcp_server.py), and an
agent dir of its own; helpers to write the files and wait for pids."""

import json
import os
import sys
import time
from pathlib import Path

import pytest

SERVER = str(Path(__file__).resolve().parents[1] / "support" / "mcp_server.py")


def stdio_entry(tmp_path, **extra) -> dict:
    return {"command": sys.executable, "args": [SERVER],
            "env": {"PID_FILE": str(tmp_path / "demo.pid"), **extra.pop("env", {})}, **extra}


def write_servers(path: Path, servers: dict, **top) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers, **top}, indent=2))


def pid_of(tmp_path) -> int:
    return int((tmp_path / "demo.pid").read_text())


def gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def agent(tmp_path, monkeypatch):
    """The agent dir (PI_CODING_AGENT_DIR) with its mcp.json path."""
    home = tmp_path / "agent"
    home.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(home))
    return home
