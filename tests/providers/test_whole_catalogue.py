"""pi 0.73.1's whole catalogue: every provider and model, with its limits, prices and
capabilities, regenerated from pi's package by ``scripts/regenerate_catalogue.py``."""

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
    """A key for every provider of the catalogue (and a sign-in for Codex, which has none)."""
    variables = {p["apiKeyEnv"] for p in json.loads(CATALOGUE.read_text())["providers"].values() if "apiKeyEnv" in p}
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


@pytest.mark.process
@pytest.mark.requires("pi")
def test_list_models_lists_every_provider_and_model_of_pi(tmp_path):
    package = require_real("pi")
    agent = tmp_path / "agent"
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), "PI_CODING_AGENT_DIR": str(agent),
           "PI_OFFLINE": "1", **every_key(agent)}
    # pi 0.73.1 writes the table to stdout from a terminal, and to stderr when stdin is
    # not one (its print mode guards stdout), as here; pi 1.6 and we write it to stdout.
    # Into a pipe Node's writes are asynchronous and the end is lost, into a file they are not.
    with open(tmp_path / "pi-list.txt", "w") as table:
        theirs = subprocess.run([node_for("pi"), str(package / "dist" / "cli.js"), "--list-models"], env=env,
                                cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=table, timeout=60)
    theirs.stderr = (tmp_path / "pi-list.txt").read_text()
    ours = subprocess.run([sys.executable, "-m", "pi_plugins.cli", "--list-models"], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert theirs.returncode == ours.returncode == 0, (theirs.stderr, ours.stderr)
    pi_rows, our_rows = rows(theirs.stderr), rows(ours.stdout)  # pi 0.73.1 writes the table to stderr
    assert len({r[0] for r in pi_rows}) == 31 and len(pi_rows) == 969, sorted({p for p in json.loads(CATALOGUE.read_text())["providers"]} - {r[0] for r in pi_rows})
    assert our_rows == pi_rows
    assert ours.stdout == theirs.stderr  # line for line: pi's order, its padded columns


@pytest.mark.process
@pytest.mark.requires("pi")
@pytest.mark.parametrize("search", ["sonnet", "gpt-5 codex", "no-such-model-anywhere"])
def test_a_searched_list_is_pis_line_for_line(tmp_path, search):
    package = require_real("pi")
    agent = tmp_path / "agent"
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), "PI_CODING_AGENT_DIR": str(agent),
           "PI_OFFLINE": "1", **every_key(agent)}
    with open(tmp_path / "pi-list.txt", "w") as table:
        subprocess.run([node_for("pi"), str(package / "dist" / "cli.js"), "--list-models", search], env=env,
                       cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=table, timeout=60)
    ours = subprocess.run([sys.executable, "-m", "pi_plugins.cli", "--list-models", search], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert ours.stdout == (tmp_path / "pi-list.txt").read_text()


@pytest.mark.process
@pytest.mark.requires("pi")
def test_with_no_model_usable_both_say_so_in_pis_words(tmp_path):
    package = require_real("pi")
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home"), "PI_CODING_AGENT_DIR": str(tmp_path / "agent"),
           "PI_OFFLINE": "1"}
    with open(tmp_path / "pi-list.txt", "w") as table:
        subprocess.run([node_for("pi"), str(package / "dist" / "cli.js"), "--list-models"], env=env,
                       cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=table, timeout=60)
    ours = subprocess.run([sys.executable, "-m", "pi_plugins.cli", "--list-models"], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    pi_lines, our_lines = (tmp_path / "pi-list.txt").read_text().splitlines(), ours.stdout.splitlines()
    assert our_lines[0] == pi_lines[0] == \
        "No models available. Use /login to log into a provider via OAuth or API key. See:"
    assert our_lines[1].endswith("/providers.md") and pi_lines[1].endswith("/providers.md")


@pytest.mark.process
@pytest.mark.requires("pi")
def test_the_script_regenerates_the_catalogue_from_pis_package(tmp_path):
    package = require_real("pi")
    out = tmp_path / "catalogue.json"
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "regenerate_catalogue.py"), str(package),
                           "--output", str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "31 providers, 969 models" in done.stderr
    assert out.read_text() == CATALOGUE.read_text()
