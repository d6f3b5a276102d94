"""Helpers for the resource-plugin tests (tests/resources): files, and running the hook
chains the way the harness will."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from pi_core.protocol.events import BeforeAgentStartEvent, InputEvent
from pi_core.protocol.tools import Tool
from pi_core.testing import RecordingUI  # noqa: F401 - the resource tests import it from here
from pi_plugins import context_files, prompt_templates, skills, system_prompt
from support.agents import run
from support.llm_server import Reply
from support.programs import node_for, require_real

#: The resource plugins in their declared (logical) order.
RESOURCE_PLUGINS = (system_prompt, context_files, skills, prompt_templates)


def write(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def write_skill(folder: Path, name: str | None = None, description: str = "Does a thing.",
                body: str = "Do the thing.", extra: str = "") -> Path:
    """``folder/SKILL.md`` with frontmatter (``name`` defaults to the folder's name)."""
    name = folder.name if name is None else name
    lines = ["---", f"name: {name}", f"description: {description}"]
    lines += [extra] if extra else []
    lines += ["---", "", body, ""]
    return write(folder / "SKILL.md", "\n".join(lines))


def tool(name: str, description: str = "") -> Tool:
    return Tool(name=name, description=description or f"The {name} tool.", function=lambda args, run: "")


def system_prompt_of(ctx, given: str = "") -> str:
    """The system prompt the ``before_agent_start`` chain makes from ``given``."""
    event = BeforeAgentStartEvent(prompt="hello", system_prompt=given)
    return run(ctx.plugins.call("before_agent_start", event=event, ctx=ctx)).system_prompt


def expand(ctx, text: str) -> str:
    """What the ``input`` chain makes of ``text``."""
    return run(ctx.plugins.call("input", event=InputEvent(text=text), ctx=ctx)).text


def commands_of(ctx):
    return run(ctx.plugins.call("register_commands", ctx=ctx))


def system_prompt_sent(server, who: str, agent: Path, cwd: Path) -> str:
    """The system prompt ``pi -p Hi`` sends from ``cwd`` with ``agent`` as its agent dir:
    ``who`` is ``"pi"`` (the real pi 1.6, its own extensions off) or ours."""
    env = {"PATH": os.environ["PATH"], "HOME": str(agent.parent / "home"), "PI_CODING_AGENT_DIR": str(agent),
           "PI_OFFLINE": "1"}
    command = ([node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js"), "-ne"] if who == "pi"
               else [sys.executable, "-m", "pi_plugins.cli"])
    server.push(Reply(text="ok"))
    done = subprocess.run([*command, "--model", "local/test-model", "--no-session", "-a", "-p", "Hi"],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{who}: {done.stderr}"
    system = server.requests[-1].body["messages"][0]["content"]
    return system if isinstance(system, str) else "".join(part["text"] for part in system)
