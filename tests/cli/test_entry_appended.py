"""pi 1.6's ``entry_appended`` event: a plugin's custom entry (``ctx.append_entry``,
pi's ``pi.appendEntry``) reaches the JSON stream as the file holds it; side by side with
the real pi 1.6 running the same plugin written as a TypeScript extension."""

import json
import subprocess
from pathlib import Path

import pytest

from support.llm_server import Reply

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]

FIXTURES = Path(__file__).parents[1] / "fixtures" / "entry_appended"


def test_a_plugins_custom_entry_is_announced_as_pi16_announces_it(pi, server):
    from support.programs import node_for, require_real

    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    seen = {}
    for who, command in (("pi16", [node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js"),
                                   "-e", str(FIXTURES / "note.ts")]),
                         ("ours", [*pi.command()[:3], "-e", str(FIXTURES / "note.py")])):
        server.push(Reply(text="done"))
        done = subprocess.run([*command, *pi.flags("--mode", "json", "-p", "go")], cwd=pi.cwd,
                              env={**pi.env, "PI_OFFLINE": "1"}, capture_output=True, text=True, timeout=120)
        events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
        [seen[who]] = [e for e in events if e["type"] == "entry_appended"]
    theirs, ours = seen["pi16"]["entry"], seen["ours"]["entry"]
    assert set(ours) == set(theirs) == {"type", "customType", "data", "id", "parentId", "timestamp"}
    assert (ours["type"], ours["customType"], ours["data"]) == (theirs["type"], theirs["customType"],
                                                                theirs["data"]) == ("custom", "note", {"seen": 1})
