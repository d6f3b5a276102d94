"""Settings resource lists with patterns, side by side with the real pi 1.6: the same
skills reach the system prompt for globs, ``!`` exclusions and exact ``+``/``-`` paths,
in the user's settings and in a trusted project's."""

import json
import os
import re
import subprocess
import sys

import pytest

from support.llm_server import Reply
from support.programs import node_for, require_real
from support.resources import write_skill

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]


def _skills_sent(server, who: str, agent, cwd) -> set[str]:
    env = {"PATH": os.environ["PATH"], "HOME": str(agent.parent / "home"), "PI_CODING_AGENT_DIR": str(agent),
           "PI_OFFLINE": "1"}
    command = ([node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js"), "-ne"] if who == "pi"
               else [sys.executable, "-m", "pi_plugins.cli"])
    server.push(Reply(text="ok"))
    done = subprocess.run([*command, "--model", "local/test-model", "--no-session", "-a", "-p", "Hi"],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{who}: {done.stderr}"
    system = server.requests[-1].body["messages"][0]["content"]
    system = system if isinstance(system, str) else "".join(part["text"] for part in system)
    return set(re.findall(r"<name>([^<]+)</name>", system))


@pytest.mark.parametrize("user,project", [
    (["extra", "extra/x*", "!old", "-skills/b"], None),
    (["extra", "!old", "+skills/old"], None),
    ([], ["!p*", "+skills/pkeep"]),
], ids=["user-globs-and-exact", "user-exact-back-in", "project-overrides"])
def test_the_same_skills_are_offered_as_by_pi16(tmp_path, server, user, project):
    sent = {}
    for who in ("pi", "ours"):
        agent, cwd = tmp_path / who / "agent", tmp_path / who / "project"
        for name in ("a", "b", "old"):
            write_skill(agent / "skills" / name)
        for name in ("x", "y"):
            write_skill(agent / "extra" / name)
        for name in ("pdrop", "pkeep", "q"):
            write_skill(cwd / ".pi" / "skills" / name)
        (agent / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
        (agent / "settings.json").write_text(json.dumps({"skills": user}))
        if project is not None:
            (cwd / ".pi" / "settings.json").write_text(json.dumps({"skills": project}))
        sent[who] = _skills_sent(server, who, agent, cwd)
    assert sent["ours"] == sent["pi"]
    assert {"a", "q"} <= sent["pi"]  # the lists filtered, not emptied
