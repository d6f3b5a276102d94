"""pi 1.6's subcommands and flags of the command-line group of issue 37, side by side
with the real pi 1.6 where it can run here: ``pi auth check`` / ``print-api-key`` /
``print-bearer-token``, ``pi config``, ``--thinking max``, ``--use-theme``, the custom
self-update command, and pi's own subcommand words never sent to the model."""

import json
import subprocess
import sys

import pytest

from support.llm_server import Reply

pytestmark = pytest.mark.process

SIGNED_IN = {"anthropic": {"type": "oauth", "access": "acc-tok", "refresh": "ref", "expires": 9999999999999}}


def _run(runner, command, *args, env=None):
    return subprocess.run([*command, *args], cwd=runner.cwd, env={**runner.env, "PI_OFFLINE": "1", **(env or {})},
                          capture_output=True, text=True, timeout=120)


def ours(runner, *args, env=None):
    return _run(runner, [sys.executable, "-m", "pi_plugins.cli"], *args, env=env)


def pi16(runner, *args, env=None):
    from support.programs import node_for, require_real

    package = require_real("pi16")
    return _run(runner, [node_for("pi16"), str(package / "dist" / "cli.js")], *args, env=env)


def _outcome(done):
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    return done.returncode, done.stdout.strip(), errors[-1:] if errors else []


@pytest.mark.requires("pi16")
@pytest.mark.parametrize("args,env", [
    (("auth", "check", "--provider", "openai"), {}),
    (("auth", "check", "--provider", "openai", "--json"), {}),
    (("auth", "check", "--provider", "nosuch", "--json"), {}),
    (("auth", "check", "--model", "gpt-4o", "--json"), {}),
    (("auth", "check", "--provider", "openai", "--json"), {"OPENAI_API_KEY": "sk-test"}),
    (("auth", "check", "--provider", "openai", "--credentials"), {"OPENAI_API_KEY": "sk-test"}),
    (("auth", "check", "--provider", "openai", "--json", "--credentials"), {"OPENAI_API_KEY": "sk-test"}),
    (("auth", "print-api-key", "--provider", "openai"), {"OPENAI_API_KEY": "sk-test"}),
    (("auth", "print-api-key", "--provider", "openai"), {}),
    (("auth", "print-bearer-token", "--provider", "openai"), {"OPENAI_API_KEY": "sk-test"}),
    (("auth", "print-api-key",), {}),
    (("auth", "check", "--provider", "anthropic", "--json", "--credentials"), {"ANTHROPIC_AUTH_TOKEN": "tok"}),
    (("auth", "print-api-key", "--provider", "anthropic"), {"ANTHROPIC_AUTH_TOKEN": "tok"}),
    (("auth", "print-api-key", "--provider", "anthropic"), {"ANTHROPIC_OAUTH_TOKEN": "otok", "ANTHROPIC_API_KEY": "k"}),
    (("auth", "check", "--provider", "anthropic", "--json", "--credentials"), {"SIGNED_IN": "1"}),
    (("auth", "check", "--model", "anthropic/claude-sonnet-4-5", "--json"), {"SIGNED_IN": "1"}),
    (("auth", "print-api-key", "--provider", "anthropic"), {"SIGNED_IN": "1"}),
    (("auth", "print-bearer-token", "--provider", "anthropic"), {"SIGNED_IN": "1"}),
    (("auth", "print-bearer-token", "--provider", "anthropic", "--min-expiry", "xx"), {"SIGNED_IN": "1"}),
], ids=lambda v: " ".join(v) if isinstance(v, tuple) else ",".join(v))
def test_auth_credential_commands_answer_as_pi16_does(pi, args, env):
    env = dict(env)
    if env.pop("SIGNED_IN", None):
        (pi.agent_dir / "auth.json").write_text(json.dumps(SIGNED_IN))
    theirs, mine = pi16(pi, *args, env=env), ours(pi, *args, env=env)
    assert _outcome(mine) == _outcome(theirs)


def test_auth_check_without_refresh_reports_a_stored_sign_in_ready(pi):
    (pi.agent_dir / "auth.json").write_text(json.dumps(
        {"anthropic": {**SIGNED_IN["anthropic"], "expires": 1000}}))
    done = ours(pi, "auth", "check", "--provider", "anthropic", "--json", "--no-refresh")
    assert (done.returncode, json.loads(done.stdout)) == (
        0, {"status": "ready", "provider": "anthropic", "authType": "oauth"})


def test_pi_config_lists_the_builtins_and_the_projects_overrides(pi):
    (pi.agent_dir / "settings.json").write_text(json.dumps({"extensions": ["-builtin:codemode"]}))
    (pi.cwd / ".pi").mkdir()
    (pi.cwd / ".pi" / "settings.json").write_text(json.dumps({"extensions": ["+builtin:codemode", "-builtin:mcp"]}))
    user = ours(pi, "config")
    assert user.returncode == 0
    assert user.stdout.splitlines()[0] == "Global Resources"
    assert "      [ ] codemode" in user.stdout.splitlines() and "      [x] mcp" in user.stdout.splitlines()
    project = ours(pi, "config", "-l", "--approve").stdout.splitlines()
    assert project[0] == "Project Local Resources"
    assert "      [+] codemode  project load" in project and "      [-] mcp  project unload" in project
    assert "      [x] tools  inherited global" in project


def test_a_pi_subcommand_whose_plugin_is_dropped_is_refused_not_sent_to_the_model(pi, server):
    (pi.agent_dir / "settings.json").write_text(json.dumps({"extensions": ["-builtin:mcp"]}))
    server.push(Reply(text="should not be asked"))
    done = ours(pi, "mcp", "list")
    assert done.returncode == 2
    assert '"pi mcp" is a pi command, but no loaded plugin provides it' in done.stderr
    assert server.requests == []


def test_thinking_max_is_taken_and_sent_as_the_models_map_says(pi, server):
    models = server.models_json("local", models=[{"id": "deep", "reasoning": True,
                                                  "thinkingLevelMap": {"max": "max"}}])
    (pi.agent_dir / "models.json").write_text(json.dumps(models))
    server.push(Reply(text="ok"))
    done = ours(pi, "--model", "local/deep", "--thinking", "max", "--no-session", "-p", "Hi")
    assert done.returncode == 0, done.stderr
    assert server.requests[-1].body["reasoning_effort"] == "max"


def test_use_theme_picks_one_theme_or_the_pair_by_the_terminals_background():
    from pi_plugins.interactive.themes import dark, light, pick_named

    themes = {"dark": dark(), "light": light()}
    assert pick_named(themes, "light")[0].name == "light"
    assert pick_named(themes, "light/dark", env={"COLORFGBG": "0;15"})[0].name == "light"
    assert pick_named(themes, "light/dark", env={})[0].name == "dark"
    found, problem = pick_named(themes, "nope")
    assert found is None and "no such theme" in problem


def test_the_custom_self_update_command_runs_with_the_newer_release_filled_in(pi, tmp_path):
    from support.wheels import build_wheel

    index = tmp_path / "index"
    index.mkdir()
    build_wheel(index, "pi-harness", "999.0.0", {}, {})
    out = tmp_path / "ran.txt"
    script = f"import sys; open({str(out)!r}, 'w').write(' '.join(sys.argv[1:]))"
    (pi.agent_dir / "settings.json").write_text(json.dumps(
        {"selfUpdateCommand": [sys.executable, "-c", script, "{packageName}", "{version}", "{installSpec}"]}))
    done = ours(pi, "update", "--no-index", "--find-links", str(index))
    assert done.returncode == 0, done.stderr
    assert out.read_text() == "pi-harness 999.0.0 pi-harness@999.0.0"
    # the variable comes first, split on whitespace
    done = ours(pi, "update", "--no-index", "--find-links", str(index),
                env={"PI_SELF_UPDATE_COMMAND": f"{sys.executable} -c pass"})
    assert done.returncode == 0 and "-c pass" in done.stderr + done.stdout
