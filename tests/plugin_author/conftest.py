"""pi-author-kit, built as a real wheel and installed into a fresh venv (entry points
``pi.plugins``), then run as ``pi`` subprocesses."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from support.wheels import build_wheel, make_venv, pip_install

KIT = Path(__file__).parent / "author_kit"
MODEL = "author-echo/echo-small"


class AuthorEnv:
    def __init__(self, base: Path, python: Path):
        self.python = python
        self.agent_dir = base / "agent"
        self.cwd = base / "project"
        self.log = base / "author.log"
        for folder in (self.agent_dir, self.cwd):
            folder.mkdir(parents=True, exist_ok=True)
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(base / "home"),
                    "PI_CODING_AGENT_DIR": str(self.agent_dir), "AUTHOR_LOG": str(self.log),
                    "PYTHONUNBUFFERED": "1"}

    def command(self, *args: str, model: bool = True) -> list:
        return [str(self.python), "-m", "pi_plugins.cli", *(["--model", MODEL] if model else []), *args]

    def pi(self, *args: str, model: bool = True, input: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(self.command(*args, model=model), cwd=self.cwd, env=self.env, input=input,
                              capture_output=True, text=True, timeout=120)

    def popen(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen(self.command(*args), cwd=self.cwd, env=self.env, text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def seen(self, kind: str | None = None) -> list[dict]:
        if not self.log.exists():
            return []
        rows = [json.loads(line) for line in self.log.read_text().splitlines()]
        return [r for r in rows if kind is None or r["kind"] == kind]

    def sessions(self) -> list[Path]:
        return sorted((self.agent_dir / "sessions").rglob("*.jsonl"))

    def settings(self, data: dict) -> None:
        (self.agent_dir / "settings.json").write_text(json.dumps(data))


@pytest.fixture(scope="module")
def kit_python(tmp_path_factory):
    base = tmp_path_factory.mktemp("kit")
    files = {str(p.relative_to(KIT)): p.read_text() for p in KIT.rglob("*.py")}
    wheel = build_wheel(base, "pi-author-kit", "1.0.0", files, {"pi.plugins": {
        "author": "pi_author_kit", "author_twin": "pi_author_kit.twin",
        "author_sloppy": "pi_author_kit.sloppy:plugin"}})
    python = make_venv(base / "venv")
    pip_install(python, wheel)
    return python


@pytest.fixture
def kit(tmp_path, kit_python):
    return AuthorEnv(tmp_path, kit_python)
