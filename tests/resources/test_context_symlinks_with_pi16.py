"""AGENTS.md as a symlink to CLAUDE.md (issue 40): side by side with the real pi 1.6,
the context files reach the system prompt in the same number and order. pi takes one
file per folder (the first of AGENTS.md, CLAUDE.md… that is a file, symlinks followed)
and tells files apart by path, not by what they point at."""

import json
import os
import re
import subprocess
import sys

import pytest

from support.llm_server import Reply
from support.programs import node_for, require_real

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]


def _context_paths(system: str, who: str) -> list[str]:
    if who == "pi":
        return re.findall(r'<project_instructions path="([^"]+)"', system) or \
            re.findall(r"^## (/\S+)$", system, re.M)
    return re.findall(r"^## (/\S+)$", system, re.M)


def _system(server, who: str, agent, cwd) -> str:
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


@pytest.mark.parametrize("layout", ["same folder", "agent dir to project", "subfolder to parent"])
def test_a_symlinked_agents_md_gives_the_context_files_pi_gives(tmp_path, server, layout):
    agent, proj = tmp_path / "agent", tmp_path / "proj"
    (proj / "sub").mkdir(parents=True)
    agent.mkdir()
    (agent / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    (proj / "CLAUDE.md").write_text("Claude's rules.\n")
    cwd = proj
    if layout == "same folder":
        (proj / "AGENTS.md").symlink_to("CLAUDE.md")
    elif layout == "agent dir to project":
        (agent / "AGENTS.md").symlink_to(proj / "CLAUDE.md")
    else:
        (proj / "sub" / "AGENTS.md").symlink_to("../CLAUDE.md")
        cwd = proj / "sub"
    theirs = _context_paths(_system(server, "pi", agent, cwd), "pi")
    ours = _context_paths(_system(server, "ours", agent, cwd), "ours")
    assert theirs and ours == theirs
