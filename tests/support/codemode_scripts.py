"""Running codemode scripts in a harness with a scripted model: each script is one
``codemode`` call the model makes; what comes back is the tool results' text."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pi_plugins.codemode as codemode
from pi_core import ToolResultMessage, tool
from pi_core.testing.harness import HarnessMaker
from pi_core.testing.scripted import Reply


@tool(parameters={"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]})
def echo(args, run):
    """Say the word back."""
    return f"echo {args['word']}"


def script_calls(*scripts: str) -> list[Reply]:
    return [*(Reply(tool_calls=[("codemode", {"code": code})]) for code in scripts), Reply(text="done")]


async def run_scripts(tmp_path: Path, *scripts: str, tools: list | None = None, plugins: tuple = (),
                      active: list[str] | None = None, **options: Any) -> tuple[list[ToolResultMessage], Any]:
    make = HarnessMaker(tmp_path)
    given = [*(tools if tools is not None else [echo]), codemode.TOOL]
    harness = await make(codemode, *plugins, script=script_calls(*scripts), tools=given, **options)
    harness.agent.set_active_tools(active or [t.name for t in given])
    messages = await harness.prompt("go")
    return [m for m in messages if isinstance(m, ToolResultMessage)], make


def results(tmp_path: Path, *scripts: str, **options: Any) -> list[str]:
    """The text of each script's result."""
    found, _ = asyncio.run(run_scripts(tmp_path, *scripts, **options))
    return [m.content[0].text for m in found]


def output_of(text: str) -> str:
    """The result without its first two lines (the status and the wall time, which varies)."""
    return text.split("\n", 2)[2]


def print_run_side_by_side(which: str, tmp_path: Path, replies: list, *args: str,
                           model: dict | None = None) -> tuple[Any, Path, list]:
    """``pi ... -p go`` of ``which`` program (``"pi16"`` on Node 22, or ``"ours"``) in a
    home of its own (a project with ``a.txt``), against a scripted server answering
    ``replies`` with the local ``test-model`` (or ``model``): (the finished process, the
    agent dir, the requests the server got)."""
    import json
    import os
    import subprocess
    import sys

    from support.llm_server import LlmServer
    from support.programs import NODE22, PI16

    home = tmp_path / which
    agent, project = home / "agent", home / "project"
    agent.mkdir(parents=True)
    project.mkdir()
    (project / "a.txt").write_text("alpha\n")
    (project / "b.txt").write_text("beta\n")
    with LlmServer() as server:
        server.push(*replies)
        models = server.models_json("local", apiKey="unused", models=[model] if model else None)
        (agent / "models.json").write_text(json.dumps(models))
        program = ([str(NODE22), str(PI16 / "dist" / "cli.js")] if which == "pi16"
                   else [sys.executable, "-m", "pi_plugins.cli"])
        done = subprocess.run([*program, "--model", "local/test-model", *args, "-p", "go"], cwd=project,
                              capture_output=True, text=True, timeout=180,
                              env={**os.environ, "PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1",
                                   "HOME": str(home)})
        assert done.returncode == 0, done.stderr
        return done, agent, list(server.requests)
