"""pi 1.6's whole catalogue: every provider and model, with its limits, prices and
capabilities, regenerated from pi's package by ``scripts/regenerate_catalogue.py``; and
``--list-models`` printing it as pi 1.6 does, for the same agent dir."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.programs import node_for, require_real

ROOT = Path(__file__).parents[2]
CATALOGUE = ROOT / "pi_plugins" / "providers" / "catalogue.json"


def every_key(agent: Path) -> dict[str, str]:
    """A key for every provider of the catalogue (and a sign-in for Codex, which has none),
    with Cloudflare's account and gateway ids, which pi 1.6 needs besides its key."""
    variables = {p["apiKeyEnv"] for p in json.loads(CATALOGUE.read_text())["providers"].values() if "apiKeyEnv" in p}
    variables |= {"CLOUDFLARE_ACCOUNT_ID", "CLOUDFLARE_GATEWAY_ID"}
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "auth.json").write_text(json.dumps({"openai-codex": {
        "type": "oauth", "access": "a", "refresh": "r", "expires": int(time.time() * 1000) + 3_600_000,
        "accountId": "acct"}}))
    os.chmod(agent / "auth.json", 0o600)
    return {v: "test-key" for v in variables}


def rows(output: str) -> list[tuple[str, ...]]:
    lines = [line.split() for line in output.splitlines() if line.strip()]
    assert lines and lines[0][:2] == ["provider", "model"], output[:300]
    return sorted(tuple(line) for line in lines[1:])


def list_with(program: str, package: Path, args: list[str], env: dict, tmp_path: Path) -> subprocess.CompletedProcess:
    """``--list-models ARGS`` by pi (``program``: its npm package) or by us (``"ours"``).
    Into a pipe Node's writes are asynchronous and the end can be lost, into a file they are not."""
    if program == "ours":
        return subprocess.run([sys.executable, "-m", "pi_plugins.cli", "--list-models", *args], env=env,
                              cwd=tmp_path, capture_output=True, text=True, timeout=60)
    with open(tmp_path / "pi-list.txt", "w") as table, open(tmp_path / "pi-err.txt", "w") as errors:
        done = subprocess.run([node_for(program), str(package / "dist" / "cli.js"), "--list-models", *args],
                              env=env, cwd=tmp_path, stdout=table, stderr=errors, timeout=90)
    return subprocess.CompletedProcess(done.args, done.returncode, (tmp_path / "pi-list.txt").read_text(),
                                       (tmp_path / "pi-err.txt").read_text())


def environment(tmp_path: Path, agent: Path, **extra: str) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), "PI_CODING_AGENT_DIR": str(agent),
            "PI_OFFLINE": "1", **extra}


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_list_models_lists_every_provider_and_model_of_pi_16(tmp_path):
    package = require_real("pi16")
    agent = tmp_path / "agent"
    env = environment(tmp_path, agent, **every_key(agent))
    theirs = list_with("pi16", package, [], env, tmp_path)
    ours = list_with("ours", package, [], env, tmp_path)
    assert theirs.returncode == ours.returncode == 0, (theirs.stderr, ours.stderr)
    pi_rows, our_rows = rows(theirs.stdout), rows(ours.stdout)
    assert len({r[0] for r in pi_rows}) == 42 and len(pi_rows) == 1698
    assert our_rows == pi_rows
    assert ours.stdout == theirs.stdout  # line for line: pi's order, its padded columns


@pytest.mark.process
@pytest.mark.requires("pi16")
@pytest.mark.parametrize("search", ["sonnet", "gpt-6 codex", "qwen token", "no-such-model-anywhere"])
def test_a_searched_list_is_pi_16s_line_for_line(tmp_path, search):
    package = require_real("pi16")
    agent = tmp_path / "agent"
    env = environment(tmp_path, agent, **every_key(agent))
    theirs = list_with("pi16", package, [search], env, tmp_path)
    ours = list_with("ours", package, [search], env, tmp_path)
    assert ours.stdout == theirs.stdout


@pytest.mark.process
@pytest.mark.requires("pi16")
@pytest.mark.parametrize("keys", [{"QWEN_TOKEN_PLAN_API_KEY": "k"}, {"CLOUDFLARE_API_KEY": "k", "GROQ_API_KEY": "k"},
                                  {"CLOUDFLARE_API_KEY": "k", "CLOUDFLARE_ACCOUNT_ID": "a"},
                                  {"ANT_LING_API_KEY": "k", "ZAI_CODING_CN_API_KEY": "k", "RADIUS_API_KEY": "k"}])
def test_which_providers_a_key_makes_usable_is_pi_16s(tmp_path, keys):
    package = require_real("pi16")
    env = environment(tmp_path, tmp_path / "agent", **keys)
    theirs = list_with("pi16", package, [], env, tmp_path)
    ours = list_with("ours", package, [], env, tmp_path)
    assert ours.stdout == theirs.stdout


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_with_no_model_usable_both_say_so_in_pis_words(tmp_path):
    package = require_real("pi16")
    env = environment(tmp_path, tmp_path / "agent")
    pi_lines = list_with("pi16", package, [], env, tmp_path).stdout.splitlines()
    our_lines = list_with("ours", package, [], env, tmp_path).stdout.splitlines()
    assert our_lines[0] == pi_lines[0] == \
        "No models available. Use /login to log into a provider via OAuth or API key. See:"
    assert our_lines[1].endswith("/providers.md") and pi_lines[1].endswith("/providers.md")


@pytest.mark.requires("pi16")
def test_the_script_regenerates_the_catalogue_from_pis_package(tmp_path, capsys):
    import importlib.util

    package = require_real("pi16")
    spec = importlib.util.spec_from_file_location("regenerate_catalogue", ROOT / "scripts" / "regenerate_catalogue.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    out = tmp_path / "catalogue.json"
    assert script.main([str(package), "--output", str(out)]) == 0  # pi's data files: no node needed
    assert "42 providers, 1698 models" in capsys.readouterr().err
    assert out.read_text() == CATALOGUE.read_text()
