"""Project trust (pi 1.6's docs/security.md): a project's ``.pi`` resources and code load
only once the folder is trusted; modes that cannot ask skip them and say so."""

import asyncio
import json
import os
import subprocess

import pytest

from pi_plugins.trust.policy import TrustStore, canonical, decide, protected_resources
from support.llm_server import Reply

APPROVE_PLUGIN = '''
from pi_core import hookimpl

@hookimpl
def project_trust(event, ctx):
    return {"trusted": "yes", "remember": True}
'''


def _system_prompt(request) -> str:
    return request.body["messages"][0]["content"]


@pytest.mark.process
def test_print_mode_runs_no_project_code_without_a_decision_and_names_approve(project, server):
    server.push(Reply(text="answer"))
    out = project.run("-p", "hi")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "answer\n"
    assert not project.marker.exists()
    [line] = [l for l in out.stderr.splitlines() if "--approve" in l]
    assert ".pi/extensions" in line and "not trusted" in line
    assert not project.trust_file.exists()  # nothing is decided for the user


@pytest.mark.process
@pytest.mark.parametrize("flag", ["--approve", "-a"])
def test_approve_loads_the_project_for_this_run_only(project, server, flag):
    server.push(Reply(text="answer"))
    out = project.run(flag, "-p", "hi")
    assert out.returncode == 0, out.stderr
    assert project.marker.read_text() == "loaded"
    assert "--approve" not in out.stderr
    assert not project.trust_file.exists()


@pytest.mark.process
def test_no_approve_wins_over_a_saved_trust(project, server):
    TrustStore(project.agent_dir).set(project.cwd, True)
    server.push(Reply(text="a"), Reply(text="b"))
    assert project.run("-p", "hi").returncode == 0
    assert project.marker.exists()
    project.marker.unlink()
    out = project.run("-na", "-p", "hi")
    assert out.returncode == 0 and not project.marker.exists()
    assert "--approve" not in out.stderr  # a decision was made: nothing to say


@pytest.mark.process
def test_json_mode_skips_too_and_keeps_stdout_for_events(project, server):
    server.push(Reply(text="answer"))
    out = project.run("--mode", "json", "hi")
    assert out.returncode == 0, out.stderr
    assert not project.marker.exists()
    assert all(json.loads(line) for line in out.stdout.splitlines())
    assert "--approve" in out.stderr


@pytest.mark.process
def test_a_user_plugin_decides_through_project_trust_and_remembers(project, server, tmp_path):
    plugin = tmp_path / "approver.py"
    plugin.write_text(APPROVE_PLUGIN)
    server.push(Reply(text="a"), Reply(text="b"))
    assert project.run("-e", str(plugin), "-p", "hi").returncode == 0
    assert project.marker.exists()
    assert json.loads(project.trust_file.read_text()) == {canonical(project.cwd): True}
    project.marker.unlink()
    assert project.run("-p", "hi").returncode == 0  # remembered: no plugin needed now
    assert project.marker.exists()


@pytest.mark.process
def test_protected_resources_are_skipped_and_context_files_load_regardless(project, server):
    (project.cwd / "AGENTS.md").write_text("Context from AGENTS.md")
    pi_dir = project.cwd / ".pi"
    (pi_dir / "APPEND_SYSTEM.md").write_text("Appended from the project")
    skill = pi_dir / "skills" / "deploy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: deploy\ndescription: Deploys the thing\n---\nSteps")
    (pi_dir / "prompts").mkdir()
    (pi_dir / "prompts" / "review.md").write_text("Review the code")
    (pi_dir / "settings.json").write_text(json.dumps({"defaultModel": "local/nope"}))
    server.push(Reply(text="a"), Reply(text="b"))
    out = project.run("-p", "hi")
    assert out.returncode == 0, out.stderr
    untrusted = _system_prompt(server.requests[-1])
    assert "Context from AGENTS.md" in untrusted
    assert "Appended from the project" not in untrusted and "deploy" not in untrusted
    [line] = [l for l in out.stderr.splitlines() if "--approve" in l]
    for name in (".pi/settings.json", ".pi/extensions", ".pi/skills", ".pi/prompts", ".pi/APPEND_SYSTEM.md"):
        assert name in line
    (pi_dir / "settings.json").unlink()
    out = project.run("-a", "-p", "hi")
    assert out.returncode == 0, out.stderr
    trusted = _system_prompt(server.requests[-1])
    assert "Context from AGENTS.md" in trusted
    assert "Appended from the project" in trusted and "deploy" in trusted


def test_what_needs_a_decision_is_pis_list(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home" / ".agents" / "skills").mkdir(parents=True)
    work = tmp_path / "repo" / "sub"
    work.mkdir(parents=True)
    (work / ".pi").mkdir()
    assert protected_resources(work) == []  # a bare .pi folder needs none
    (work / ".pi" / "AGENTS.md").write_text("not protected")
    assert protected_resources(work) == []
    (tmp_path / "repo" / ".agents" / "skills").mkdir(parents=True)  # an ancestor's
    assert protected_resources(work) == [str(tmp_path / "repo" / ".agents" / "skills")]
    assert protected_resources(tmp_path / "home") == []  # the user's own ~/.agents/skills


def test_the_order_of_the_decision(tmp_path, monkeypatch):
    asyncio.run(_order(tmp_path, monkeypatch))


async def _order(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    agent = tmp_path / "agent"
    work = tmp_path / "repo" / "app"
    (work / ".pi" / "skills").mkdir(parents=True)
    assert (await decide(work, agent)).source == "unasked"
    assert not (await decide(work, agent)).trusted
    assert (await decide(work, agent, global_settings={"defaultProjectTrust": "always"})).trusted
    assert not (await decide(work, agent, global_settings={"defaultProjectTrust": "never"})).trusted
    TrustStore(agent).set(tmp_path / "repo", True)  # a parent's decision holds below it
    assert (await decide(work, agent, global_settings={"defaultProjectTrust": "never"})).source == "saved"
    TrustStore(agent).set(work, False)  # the closest wins
    assert not (await decide(work, agent)).trusted
    assert (await decide(work, agent, override=True)).trusted
    # no protected resources: trusted, unless a saved decision says no
    plain = tmp_path / "plain"
    plain.mkdir()
    assert (await decide(plain, agent)).trusted
    TrustStore(agent).set(plain, False)
    assert not (await decide(plain, agent)).trusted


def test_the_chat_question_saves_what_is_chosen(tmp_path):
    asyncio.run(_question(tmp_path))


async def _question(tmp_path):
    class Answers:
        has_ui = True

        def __init__(self, choice):
            self.choice, self.asked = choice, []

        async def select(self, title, options, timeout=None):
            self.asked.append((title, options))
            return next(o for o in options if o.startswith(self.choice))

    agent, work = tmp_path / "agent", tmp_path / "repo"
    (work / ".pi" / "extensions").mkdir(parents=True)
    once = Answers("Trust (this session only)")
    assert (await decide(work, agent, ui=once)).trusted and not (agent / "trust.json").exists()
    assert once.asked[0][1] == ["Trust", f"Trust parent folder ({tmp_path})", "Trust (this session only)",
                                "Do not trust", "Do not trust (this session only)"]
    parent = Answers("Trust parent folder")
    assert (await decide(work, agent, ui=parent)).trusted
    assert json.loads((agent / "trust.json").read_text()) == {canonical(tmp_path): True}
    asked_again = Answers("Do not trust")
    assert (await decide(work, agent, ui=asked_again)).trusted and asked_again.asked == []


def test_trust_json_is_written_as_pi_writes_it(tmp_path):
    store = TrustStore(tmp_path)
    store.set(tmp_path / "b", True)
    store.set_many([(str(tmp_path / "a"), False), (str(tmp_path / "b"), None)])
    store.set(tmp_path / "c", True)
    assert (tmp_path / "trust.json").read_text() == (
        "{\n" f'  "{tmp_path}/a": false,\n' f'  "{tmp_path}/c": true\n' "}\n")
    assert not (tmp_path / "trust.json.lock").exists()


def test_a_broken_trust_file_decides_nothing_and_is_kept(tmp_path):
    import asyncio

    (tmp_path / "trust.json").write_text("{not json")
    work = tmp_path / "w"
    (work / ".pi" / "extensions").mkdir(parents=True)
    decision = asyncio.run(decide(work, tmp_path))
    assert not decision.trusted and "trust.json" in decision.problems[0]
    assert (tmp_path / "trust.json").read_text() == "{not json"


# ---------------------------------------------------------------- with the real pi 1.6


def _pi16(project, *args, timeout=120):
    from support.programs import node_for, require_real

    package = require_real("pi16")
    env = {**project.env, "PI_OFFLINE": "1"}
    return subprocess.run([node_for("pi16"), str(package / "dist" / "cli.js"), "--model", "local/test-model",
                           *args], cwd=project.cwd, env=env, capture_output=True, text=True, timeout=timeout)


PI16_APPROVER = '''
module.exports = function (pi) {
  pi.on("project_trust", async () => ({ trusted: "yes", remember: true }));
};
'''


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_pi16_skips_the_same_project_without_a_decision(project, server):
    server.push(Reply(text="a"))
    out = _pi16(project, "-p", "hi")
    assert out.returncode == 0, out.stderr
    assert not project.pi16_marker.exists()


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_a_decision_pi16_saved_is_honoured_here(project, server):
    extensions = project.agent_dir / "extensions"
    extensions.mkdir()
    (extensions / "approver.js").write_text(PI16_APPROVER)
    server.push(Reply(text="a"), Reply(text="b"))
    out = _pi16(project, "-p", "hi")
    assert out.returncode == 0, out.stderr
    assert project.pi16_marker.exists()
    (extensions / "approver.js").unlink()
    saved = json.loads(project.trust_file.read_text())
    assert saved == {canonical(project.cwd): True}
    out = project.run("-p", "hi")
    assert out.returncode == 0, out.stderr
    assert project.marker.exists()


@pytest.mark.process
@pytest.mark.requires("pi16")
@pytest.mark.parametrize("decision", [True, False])
def test_a_decision_saved_here_is_honoured_by_pi16(project, server, decision):
    import asyncio

    from pi_core.context import NullUI
    from pi_plugins.trust import trust_command

    class Chooser(NullUI):
        has_ui = True

        async def select(self, title, options, timeout=None):
            wanted = "Trust" if decision else "Do not trust"
            return next(o for o in options if o[2:] == wanted)  # after pi's ✓ column

    class Ctx:
        cwd, agent_dir, settings, ui = str(project.cwd), project.agent_dir, None, Chooser()

    asyncio.run(trust_command("", Ctx()))  # /trust in the chat
    server.push(Reply(text="a"))
    out = _pi16(project, "-p", "hi")
    assert out.returncode == 0, out.stderr
    assert project.pi16_marker.exists() is decision


@pytest.mark.process
@pytest.mark.parametrize("mode", ["rpc", "acp"])
def test_the_program_modes_skip_an_untrusted_project_and_keep_stdout_for_their_protocol(project, mode):
    first = {"rpc": {"type": "get_state", "id": "1"},
             "acp": {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}}[mode]
    out = project.run("--mode", mode, input=json.dumps(first) + "\n")
    assert not project.marker.exists()
    assert [l for l in out.stderr.splitlines() if "--approve" in l]
    assert all(json.loads(line) for line in out.stdout.splitlines())
    approved = project.run("--mode", mode, "--approve", input=json.dumps(first) + "\n")
    assert project.marker.exists() and "--approve" not in approved.stderr


@pytest.mark.process
def test_help_and_pi_plugins_run_no_project_code_without_a_decision(project):
    assert project.run("--help").returncode == 0
    assert not project.marker.exists()
    out = subprocess.run([*project.command()[:3], "plugins"], cwd=project.cwd, env=project.env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "probe" not in out.stdout and "--approve" in out.stderr
    assert not project.marker.exists()
    TrustStore(project.agent_dir).set(project.cwd, True)
    assert project.run("--help").returncode == 0
    assert project.marker.exists()  # trusted: its plugins may add flags to the help
