"""Helpers for session tests: pi's fixtures, messages shaped like the agent's, real pi."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from support.fixtures import SESSION_FIXTURES
from support.programs import REAL_PI

from pi_core.protocol.messages import (
    AssistantMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

FIXTURES = SESSION_FIXTURES
PI_PACKAGE = REAL_PI
PI_PROBE = Path(__file__).resolve().parents[1] / "session" / "pi_probe.mjs"


def fixture(name: str) -> Path:
    return FIXTURES / name


def copy_fixture(name: str, directory: Path) -> Path:
    target = directory / name
    shutil.copyfile(fixture(name), target)
    target.chmod(0o644)
    return target


def user(text: str) -> UserMessage:
    return UserMessage(content=[TextContent(text)])


def assistant(text: str = "", calls: list[tuple[str, str]] = (), model: str = "fake-model",
              provider: str = "fake-openai") -> AssistantMessage:
    content = [TextContent(text)] if text else []
    content += [ToolCall(id=call_id, name=name, arguments={"command": "echo"})
                for call_id, name in calls]
    return AssistantMessage(content=content, api="openai-completions", provider=provider,
                            model=model, usage=Usage(), stop_reason="toolUse" if calls else "stop")


def tool_result(call_id: str, text: str = "ok", name: str = "bash") -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name=name, content=[TextContent(text)])



def pi_probe(*args: str) -> dict | list:
    """Run ``pi_probe.mjs`` (the real pi's SessionManager) and return its JSON answer."""
    done = subprocess.run(["node", str(PI_PROBE), *args], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PI_PACKAGE": str(PI_PACKAGE)})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
