"""Settings resource lists with patterns, side by side with the real pi 1.6: the same
skills reach the system prompt for globs, ``!`` exclusions and exact ``+``/``-`` paths,
in the user's settings and in a trusted project's."""

import json
import re

import pytest
from support.resources import system_prompt_sent, write_skill

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]


def _skills_sent(server, who: str, agent, cwd) -> set[str]:
    return set(re.findall(r"<name>([^<]+)</name>", system_prompt_sent(server, who, agent, cwd)))


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
