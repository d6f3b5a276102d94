"""Packages settings.json lists but the disk lacks are installed at start-up, as pi 1.6
installs them: in every mode, before the resources load, the project's once it is
trusted, none offline; one that cannot be installed becomes pi's warning and the run goes
on without it."""

import json
import subprocess

import pytest

from pi_core.app.settings import Settings
from pi_plugins.packages.startup_install import install_missing
from support.cli import PiRunner
from support.llm_server import Reply


def start(home, approve=None, env=None):
    """What the start-up hook does for this home: (lines announced, warnings)."""
    said = []
    settings = Settings.load(str(home.project), home.agent, project_trusted=approve)
    warnings = install_missing(settings, env=env or {}, say=said.append)
    return said, warnings


def write_settings(home, data, project=False):
    path = home.project / ".pi" / "settings.json" if project else home.agent / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


@pytest.mark.process
def test_print_mode_installs_a_missing_package_and_its_skill_reaches_the_model(tmp_path, server, registry):
    pi = PiRunner(tmp_path, server)
    pi.env["npm_config_registry"] = registry.url
    (pi.agent_dir / "settings.json").write_text(json.dumps({"packages": ["npm:pi-prompt-template-model@0.12.2"]}))
    server.push(Reply(text="ok"))
    done = pi.run("--no-session", "-p", "Hi")
    assert done.returncode == 0, done.stderr
    assert "Installing npm:pi-prompt-template-model@0.12.2...\n" in done.stderr
    assert done.stdout == "ok\n"
    system = server.requests[-1].body["messages"][0]["content"]
    system = system if isinstance(system, str) else "".join(part["text"] for part in system)
    assert "<name>prompt-template-authoring</name>" in system
    package = pi.agent_dir / "npm" / "node_modules" / "pi-prompt-template-model"
    assert (package / "skills" / "prompt-template-authoring" / "SKILL.md").is_file()
    assert json.loads((pi.agent_dir / "settings.json").read_text()) == {
        "packages": ["npm:pi-prompt-template-model@0.12.2"]}  # unchanged

    server.push(Reply(text="again"))
    done = pi.run("--no-session", "-p", "Hi")  # installed now: nothing to announce
    assert done.returncode == 0 and "Installing" not in done.stderr


@pytest.mark.process
def test_a_package_that_cannot_be_installed_is_warned_about_once_and_the_run_goes_on(tmp_path, server, registry):
    pi = PiRunner(tmp_path, server)
    pi.env["npm_config_registry"] = registry.url
    (pi.agent_dir / "settings.json").write_text(json.dumps({"packages": ["npm:no-such-package", "npm:pi-themes"]}))
    server.push(Reply(text="ok"))
    done = pi.run("--no-session", "-p", "Hi")
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr
    warning = [line for line in done.stderr.splitlines() if "no-such-package" in line and "Installing" not in line]
    assert warning == ['warning: Extension package "npm:no-such-package": failed to install (npm package '
                       f'no-such-package not found in the registry {registry.url}). Run "pi remove npm:no-such-package" to '
                       'remove it from settings.json.'], done.stderr
    assert (pi.agent_dir / "npm" / "node_modules" / "pi-themes").is_dir()  # the others still install


@pytest.mark.process
def test_offline_installs_nothing(tmp_path, server, registry):
    pi = PiRunner(tmp_path, server)
    pi.env["npm_config_registry"] = registry.url
    (pi.agent_dir / "settings.json").write_text(json.dumps({"packages": ["npm:pi-themes"]}))
    server.push(Reply(text="ok"))
    done = pi.run("--offline", "--no-session", "-p", "Hi")
    assert done.returncode == 0, done.stderr
    assert "Installing" not in done.stderr and not (pi.agent_dir / "npm").exists()
    assert registry.requests == []


def test_pi_offline_installs_nothing(home, registry):
    write_settings(home, {"packages": ["npm:pi-themes"]})
    assert start(home, env={"PI_OFFLINE": "1"}) == ([], [])
    assert registry.requests == [] and not (home.agent / "npm").exists()


def test_an_installed_package_of_another_version_than_the_pinned_one_is_reinstalled(home):
    write_settings(home, {"packages": ["npm:pi-themes@1.0.1"]})
    assert start(home) == (["Installing npm:pi-themes@1.0.1..."], [])
    manifest = home.agent / "npm" / "node_modules" / "pi-themes" / "package.json"
    manifest.write_text(manifest.read_text().replace('"version": "1.0.1"', '"version": "1.0.0"'))
    assert start(home) == (["Installing npm:pi-themes@1.0.1..."], [])
    assert json.loads(manifest.read_text())["version"] == "1.0.1"
    assert start(home) == ([], [])


def test_project_packages_install_only_in_a_trusted_project(home):
    write_settings(home, {"packages": ["npm:pi-themes"]}, project=True)
    assert start(home, approve=False) == ([], [])
    assert not (home.project / ".pi" / "npm").exists()
    assert start(home, approve=True) == (["Installing npm:pi-themes..."], [])
    assert (home.project / ".pi" / "npm" / "node_modules" / "pi-themes").is_dir()


def test_a_project_package_that_fails_names_the_local_remove(home):
    write_settings(home, {"packages": ["npm:no-such-package"]}, project=True)
    _, warnings = start(home, approve=True)
    assert warnings[0].endswith('Run "pi remove npm:no-such-package --local" to remove it from settings.json.')


def test_a_missing_git_package_is_cloned_at_its_ref(home, git_server):
    from support.git_server import run_git

    repo = git_server.repo("owner/pkg")
    v1 = repo.commit({"skills/s/SKILL.md": "---\nname: s\ndescription: S.\n---\nx\n"}, tag="v1")
    repo.commit({"skills/s/SKILL.md": "---\nname: s\ndescription: Later.\n---\nx\n"})
    write_settings(home, {"packages": ["git:git.example.com/owner/pkg@v1"]})
    assert start(home) == (["Installing git:git.example.com/owner/pkg@v1..."], [])
    clone = home.agent / "git" / "git.example.com" / "owner" / "pkg"
    assert run_git("rev-parse", "HEAD", cwd=clone) == v1
    assert start(home) == ([], [])  # a clone that is there is left alone (pi update moves it)


def test_local_paths_and_autoload_deltas_are_never_installed(home):
    write_settings(home, {"packages": ["../nowhere", "npm:pi-themes"]})
    write_settings(home, {"packages": [{"source": "npm:pi-themes", "autoload": False, "themes": []}]}, project=True)
    said, warnings = start(home, approve=True)
    assert said == ["Installing npm:pi-themes..."] and warnings == []
    assert not (home.project / ".pi" / "npm").exists()  # the delta changes the user's entry




def test_reload_tries_the_missing_packages_again_and_says_so_through_the_ui(home):
    from pi_core.context import Context
    from pi_core.protocol.events import SessionStart
    from pi_plugins import packages
    from support.agents import run

    class Ui:
        def __init__(self):
            self.notes = []

        def notify(self, message, level="info"):
            self.notes.append((level, message))

    write_settings(home, {"packages": ["npm:pi-themes", "npm:no-such-package"]})
    from pi_core.plugins import Plugins

    ctx = Context(cwd=str(home.project), agent_dir=home.agent, ui=Ui(), plugins=Plugins(),
                  settings=Settings.load(str(home.project), home.agent, project_trusted=True))
    run(packages.session_start(SessionStart(reason="startup"), ctx))
    assert ctx.ui.notes == [] and not (home.agent / "npm").exists()  # start-up's install is the shell's
    run(packages.session_start(SessionStart(reason="reload"), ctx))
    assert ctx.ui.notes[:2] == [("info", "Installing npm:pi-themes..."), ("info", "Installing npm:no-such-package...")]
    assert ctx.ui.notes[2][0] == "warning" and 'Extension package "npm:no-such-package"' in ctx.ui.notes[2][1]
    assert (home.agent / "npm" / "node_modules" / "pi-themes").is_dir()
