"""AGENTS.md as a symlink to CLAUDE.md (issue 40): side by side with the real pi 1.6,
the context files reach the system prompt in the same number and order. pi takes one
file per folder (the first of AGENTS.md, CLAUDE.md… that is a file, symlinks followed)
and tells files apart by path, not by what they point at."""

import json
import re

import pytest
from support.resources import system_prompt_sent

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]


def _context_paths(system: str, who: str) -> list[str]:
    if who == "pi":
        return re.findall(r'<project_instructions path="([^"]+)"', system) or \
            re.findall(r"^## (/\S+)$", system, re.M)
    return re.findall(r"^## (/\S+)$", system, re.M)


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
    theirs = _context_paths(system_prompt_sent(server, "pi", agent, cwd), "pi")
    ours = _context_paths(system_prompt_sent(server, "ours", agent, cwd), "ours")
    assert theirs and ours == theirs
