"""pi's resource-list patterns in the settings' ``extensions`` list, side by side with
pi 1.6 (its extensions in TypeScript, ours in Python, laid out alike): a listed folder
gives its plugin files, a glob keeps the ones it matches, ``!glob`` leaves out (also
what the scope's ``extensions/`` folder holds), ``+path`` puts an exact path back and
``-path`` takes one out whatever else says."""

import json
import subprocess
from pathlib import Path

import pytest

from support.llm_server import Reply

SUFFIX = {"pi16": ".ts", "ours": ".py"}
PLUGIN = {"pi16": 'import {{ appendFileSync }} from "node:fs";\n'
                  'export default function () {{ appendFileSync(process.env.LOADED, "{name}\\n"); }}\n',
          "ours": 'import os\n\nwith open(os.environ["LOADED"], "a") as f:\n    f.write("{name}\\n")\n'}


def _lay_out(agent_dir: Path, who: str, user: list[str], project_dir: Path | None = None,
             project: list[str] | None = None) -> None:
    suffix = SUFFIX[who]
    files = {"extensions/auto_a", "extensions/auto_b", "extras/x_one", "extras/x_two", "extras/y_three",
             "single"}
    for name in files:
        path = agent_dir / f"{name}{suffix}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(PLUGIN[who].format(name=Path(name).name))
    (agent_dir / "settings.json").write_text(json.dumps({"extensions": [e.format(s=suffix) for e in user]}))
    if project_dir is not None:
        for name in ("extensions/proj_a", "extensions/proj_b"):
            path = project_dir / f"{name}{suffix}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(PLUGIN[who].format(name=Path(name).name))
        (project_dir / "settings.json").write_text(json.dumps({"extensions": [e.format(s=suffix)
                                                                               for e in project or []]}))


def _loaded(pi, server, who: str, user: list[str], project: list[str] | None = None) -> list[str]:
    from support.cli import trust_project
    from support.programs import node_for, require_real

    home = pi.cwd.parent / who
    agent_dir, cwd = home / "agent", home / "project"
    cwd.mkdir(parents=True)
    agent_dir.mkdir(parents=True)
    (agent_dir / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    _lay_out(agent_dir, who, user, cwd / ".pi" if project is not None else None, project)
    trust_project(agent_dir, cwd)
    loaded = home / "loaded.txt"
    command = ([node_for("pi16"), str(require_real("pi16") / "dist" / "cli.js")] if who == "pi16"
               else [*pi.command()[:3]])
    server.push(Reply(text="ok"))
    done = subprocess.run([*command, *pi.flags("--no-session", "-p", "hi")], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env={**pi.env, "PI_CODING_AGENT_DIR": str(agent_dir),
                                                       "PI_OFFLINE": "1", "LOADED": str(loaded)})
    assert done.returncode == 0, (who, done.stderr)
    return sorted(loaded.read_text().split()) if loaded.exists() else []


@pytest.mark.process
@pytest.mark.requires("pi16")
@pytest.mark.parametrize("user, project, expected", [
    (["extras", "single{s}"], None, ["auto_a", "auto_b", "single", "x_one", "x_two", "y_three"]),
    (["extras", "extras/x_*", "+extras/y_three{s}", "-extras/x_two{s}", "!auto_b*"], None,
     ["auto_a", "x_one", "y_three"]),
    (["-extensions/auto_a{s}", "extras", "!**/x_*"], None, ["auto_b", "y_three"]),
    ([], ["!proj_b*"], ["auto_a", "auto_b", "proj_a"]),
], ids=["plain", "glob-plus-minus-bang", "exact-minus-on-the-folder", "project-scope"])
def test_extensions_patterns_choose_what_loads_as_pi16_chooses(pi, server, user, project, expected):
    theirs = _loaded(pi, server, "pi16", user, project)
    ours = _loaded(pi, server, "ours", user, project)
    assert ours == theirs == expected


def test_a_plugin_a_pattern_leaves_out_is_never_imported_and_listed_as_skipped(tmp_path, monkeypatch):
    from pi_core.app.discovery import load_plugins

    agent_dir, cwd = tmp_path / "agent", tmp_path / "project"
    cwd.mkdir()
    monkeypatch.setenv("LOADED", str(tmp_path / "loaded.txt"))
    _lay_out(agent_dir, "ours", ["extras", "!x_*", "+extras/x_two.py", "-extensions/auto_b.py"])
    plugins = load_plugins(cwd=cwd, agent_dir=agent_dir, builtins=False)
    loaded = {i.name: i.source for i in plugins.infos}
    assert loaded == {"auto_a": "file", "x_two": "settings", "y_three": "settings"}
    assert sorted((tmp_path / "loaded.txt").read_text().split()) == ["auto_a", "x_two", "y_three"]
    skipped = {f.name: f.reason for f in plugins.skipped}
    assert skipped == {"auto_b": "left out by a pattern in the user settings' extensions",
                       "x_one": "left out by a pattern in the user settings' extensions"}
