"""The load order docs/plugins.md promises, and the project's plugin lists, in the real
``pi -p``: plugin files that log when they are imported and when their hook runs (hooks
run in load order), in a temp agent dir and project, against the scripted model."""

import json

import pytest
from support.llm_server import Reply

LOGGING = '''
from pathlib import Path

from pi_core import hookimpl

LOG = Path({log!r})
with LOG.open("a") as f:
    f.write("import {name}\\n")


@hookimpl
def agent_start(event):
    with LOG.open("a") as f:
        f.write("call {name}\\n")
'''


def plugin(path, log):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(LOGGING.format(log=str(log), name=path.stem))
    return path


def settings(folder, data):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps(data))


def logged(log, what):
    lines = log.read_text().splitlines() if log.exists() else []
    return [line.split(" ", 1)[1] for line in lines if line.startswith(what + " ")]


@pytest.mark.process
@pytest.mark.parametrize("trust", ["saved", "flag"])
def test_print_mode_loads_plugins_in_the_documented_order(pi, server, tmp_path, trust):
    """Extension folders (user, then project), then settings ``extensions`` (user, then
    project), then ``-e``, whether trust comes from trust.json or from ``--approve``."""
    log = tmp_path / "log"
    plugin(pi.agent_dir / "extensions" / "user_folder.py", log)
    plugin(pi.cwd / ".pi" / "extensions" / "project_folder.py", log)
    settings(pi.agent_dir, {"extensions": [str(plugin(tmp_path / "listed" / "user_listed.py", log))]})
    settings(pi.cwd / ".pi", {"extensions": [str(plugin(tmp_path / "listed" / "project_listed.py", log))]})
    command_line = plugin(tmp_path / "command_line.py", log)
    if trust == "saved":
        pi.trust_project()
    server.push(Reply(text="done"))
    out = pi.run("-e", str(command_line), *(["--approve"] if trust == "flag" else []), "-p", "hi")
    assert out.returncode == 0, out.stderr
    order = ["user_folder", "project_folder", "user_listed", "project_listed", "command_line"]
    assert logged(log, "call") == order
    assert sorted(logged(log, "import")) == sorted(order)  # each imported once


@pytest.mark.process
def test_print_mode_never_imports_a_plugin_the_trusted_project_disables(pi, server, tmp_path):
    log = tmp_path / "log"
    plugin(pi.agent_dir / "extensions" / "unwanted.py", log)
    plugin(pi.agent_dir / "extensions" / "kept.py", log)
    settings(pi.cwd / ".pi", {"plugins": {"disabled": ["unwanted"]}})
    pi.trust_project()
    server.push(Reply(text="done"))
    out = pi.run("-p", "hi")
    assert out.returncode == 0, out.stderr
    assert logged(log, "import") == ["kept"]
    assert logged(log, "call") == ["kept"]


@pytest.mark.process
def test_print_mode_ignores_the_plugin_lists_of_an_untrusted_project(pi, server, tmp_path):
    log = tmp_path / "log"
    plugin(pi.agent_dir / "extensions" / "wanted.py", log)
    settings(pi.cwd / ".pi", {"plugins": {"disabled": ["wanted"]}})
    pi.trust_project(False)
    server.push(Reply(text="done"))
    out = pi.run("-p", "hi")
    assert out.returncode == 0, out.stderr
    assert logged(log, "call") == ["wanted"]


def test_before_trust_what_the_project_would_leave_out_waits_and_the_order_holds(tmp_path):
    """The loader behind ``pi -p`` when plugins may decide trust: the user's plugins load
    first, but not those the project's lists (read, not applied) leave out; once trust
    is decided the rest load, in the order a single load with those settings gives."""
    from pi_core.app.discovery import load_plugins, load_project_plugins
    from pi_core.app.settings import Settings

    agent, cwd, log = tmp_path / "agent", tmp_path / "project", tmp_path / "log"
    for name in ("first", "unwanted", "zlast"):
        plugin(agent / "extensions" / f"{name}.py", log)
    plugin(cwd / ".pi" / "extensions" / "project_folder.py", log)
    settings(cwd / ".pi", {"plugins": {"disabled": ["unwanted"]}, "extensions": ["-builtin:budget"]})
    command_line = plugin(tmp_path / "command_line.py", log)

    def start():
        untrusted = Settings.load(cwd, agent, project_trusted=False)
        return load_plugins(cwd=cwd, agent_dir=agent, extension_paths=[command_line], settings=untrusted,
                            if_trusted=Settings.load(cwd, agent, project_trusted=True))

    def at_once(trusted):
        return [(i.name, i.source) for i in load_plugins(
            cwd=cwd, agent_dir=agent, extension_paths=[command_line],
            settings=Settings.load(cwd, agent, project_trusted=trusted)).infos]

    plugins = start()
    before = [i.name for i in plugins.infos]
    assert "unwanted" not in before and "budget" not in before and "project_folder" not in before
    assert "unwanted" not in logged(log, "import")
    load_project_plugins(plugins, settings=Settings.load(cwd, agent, project_trusted=True))
    assert [(i.name, i.source) for i in plugins.infos] == at_once(True)
    assert "unwanted" not in logged(log, "import")
    assert {s.name: s.reason for s in plugins.skipped} == {
        "budget": "dropped (-builtin:budget in the project settings)", "unwanted": "disabled (plugins.disabled)"}

    untrusted = start()  # the project is not trusted: its lists do not apply after all
    load_project_plugins(untrusted, settings=Settings.load(cwd, agent, project_trusted=False))
    assert [(i.name, i.source) for i in untrusted.infos] == at_once(False)
    assert "unwanted" in logged(log, "import") and untrusted.skipped == []
