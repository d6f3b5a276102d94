"""What a newcomer runs works in a venv made with ``pip install -e .`` alone: the README's
first command and every docs example, with neither pytest nor any other test extra.

The rest of the suite runs in the test venv, where pytest is importable, so it cannot see a
runtime module that imports a test-only library; these tests build the user's venv.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
SCRIPTS = sorted(p for p in (ROOT / "docs" / "examples").glob("*.py") if p.with_suffix(".out").exists())
#: Plugin files, each with the ``pi -e docs/examples/...`` line its docstring tells users to run.
PLUGIN_RUNS = sorted(re.sub(r"\s*\\\\\n\s*", " ", m.group(1))
                     for p in (ROOT / "docs" / "examples").glob("*.py")
                     for m in re.finditer(r"^    (pi -e docs/examples/(?:.*\\\\\n)*.*)$", p.read_text(), re.M))
README_RUN = "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/pi "

pytestmark = pytest.mark.process


@pytest.fixture(scope="module")
def user_venv(tmp_path_factory) -> Path:
    """A venv with pi-harness installed as the README installs it, and nothing else."""
    venv = tmp_path_factory.mktemp("user") / ".venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    done = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "-e", str(ROOT)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    probe = subprocess.run([str(venv / "bin" / "python"), "-c", "import pytest"],
                           capture_output=True, text=True)
    assert probe.returncode != 0, "the user's venv must not have pytest"
    return venv


def user_env(home: Path, venv: Path) -> dict:
    return {"PATH": f"{venv / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}", "HOME": str(home),
            "PI_CODING_AGENT_DIR": str(home / "agent"), "PYTHONUNBUFFERED": "1"}


def run_pi(venv: Path, command_line: str, cwd: Path) -> subprocess.CompletedProcess:
    """``command_line`` (the words after ``pi``) run by the venv's ``pi`` in ``cwd``."""
    args = [a.strip('"') for a in re.findall(r'"[^"]*"|\S+', command_line)]
    args = [str(ROOT / a) if a.startswith("docs/") else a for a in args]
    return subprocess.run([str(venv / "bin" / "pi"), *args], cwd=cwd, env=user_env(cwd, venv),
                          capture_output=True, text=True, timeout=120)


def test_the_readme_first_command_works_without_the_test_extras(user_venv, tmp_path):
    line = next(l.strip() for l in (ROOT / "README.md").read_text().splitlines()
                if l.strip().startswith(README_RUN))
    (tmp_path / "notes.txt").write_text("x")
    done = run_pi(user_venv, line[len(README_RUN):], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "pytest" not in done.stderr
    assert done.stdout.splitlines()[0] == "This folder holds:"
    assert "notes.txt" in done.stdout.splitlines()


@pytest.mark.parametrize("example", SCRIPTS, ids=lambda p: p.name)
def test_every_docs_example_prints_its_out_file_without_the_test_extras(user_venv, example, tmp_path):
    done = subprocess.run([str(user_venv / "bin" / "python"), str(example)], cwd=tmp_path,
                          env=user_env(tmp_path, user_venv), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == example.with_suffix(".out").read_text()


@pytest.mark.parametrize("command_line", PLUGIN_RUNS)
def test_every_docs_plugin_answers_without_the_test_extras(user_venv, command_line, tmp_path):
    done = run_pi(user_venv, command_line[len("pi "):], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() and "pytest" not in done.stderr
