"""Run a real client program (pi's RpcClient, pi-acp) against ``pi`` from PATH, where
``pi`` is the real pi 0.73.1 (``"real"``), the real pi 1.6.0 on Node 22 (``"real16"``)
or pi-harness (``"ours"``): one home per run, a bin folder whose ``pi`` starts the one
asked for, and the scripted LLM server behind them."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from support.programs import NODE22, PI16, REAL_PI

NODE_SCRIPTS = Path(__file__).parent / "node"


class PiHome:
    """A home for one ``pi``: agent dir (models.json on the server, with an API key, as
    pi-acp checks for one), project folder, and ``bin/pi`` starting ``which``."""

    def __init__(self, root: Path, server, which: str, models: list | None = None,
                 settings: dict | None = None, configured: bool = True) -> None:
        self.root, self.which, self.server = root, which, server
        self.agent_dir = root / "agent"
        self.cwd = root / "project"
        self.bin = root / "bin"
        for folder in (self.agent_dir, self.cwd, self.bin, root / "home"):
            folder.mkdir(parents=True, exist_ok=True)
        if configured:
            document = server.models_json("local", models=models or ["test-model"], apiKey="test-key")
            (self.agent_dir / "models.json").write_text(json.dumps(document))
        if settings:
            (self.agent_dir / "settings.json").write_text(json.dumps(settings))
        if which == "real":
            command = f'exec node "{REAL_PI / "dist" / "cli.js"}" "$@"'
        elif which == "real16":
            command = f'exec "{NODE22}" "{PI16 / "dist" / "cli.js"}" "$@"'
        else:
            command = f'exec "{sys.executable}" -m pi_plugins.cli "$@"'
        self._script("pi", command)
        # pi-acp asks `npm view` for pi's newest version: no test touches the network
        self._script("npm", 'echo "npm is not available in tests" >&2; exit 1')

    def _script(self, name: str, body: str) -> None:
        launcher = self.bin / name
        launcher.write_text(f"#!/bin/sh\n{body}\n")
        launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)

    @property
    def env(self) -> dict[str, str]:
        return {
            "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(self.root / "home"),
            "PI_CODING_AGENT_DIR": str(self.agent_dir),
            "PI_OFFLINE": "1",
            "PYTHONUNBUFFERED": "1",
        }

    def node(self, script: str, *args: str, timeout: float = 120, node: str = "node") -> subprocess.CompletedProcess:
        """Run one of the node scripts (``node``: the binary, Node 22 for the 1.x clients)."""
        return subprocess.run([node, str(NODE_SCRIPTS / script), *args], cwd=self.cwd, env=self.env,
                              capture_output=True, text=True, timeout=timeout)

    def popen_node(self, script: str, *args: str, node: str = "node") -> subprocess.Popen:
        return subprocess.Popen([node, str(NODE_SCRIPTS / script), *args], cwd=self.cwd, env=self.env,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
