"""One ``pi -p`` run by the real pi 0.73.1 and by pi-harness against the same scripted
server, each in a home of its own: the requests they sent, for tests that compare them.

pi runs with ``node --import support/node/provider_origins.mjs``, so PI_PROVIDER_ORIGINS
moves its origins as it moves ours."""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

from support.llm_server import Reply
from support.programs import node_for, require_real

SHIM = Path(__file__).parent / "node" / "provider_origins.mjs"


def requests_of_both(tmp_path: Path, llm_server, model: str, *, env: dict | None = None,
                     origins: dict | None = None, args: tuple = (),
                     prepare: Callable[[Path], None] | None = None, answer: str = "ok",
                     real: str = "pi") -> tuple:
    """(pi's request, ours) for ``--model model ARGS -p Hi``; ``prepare(agent_dir)`` writes
    what both need there first (models.json, auth.json). ``real`` is ``"pi16"`` to run
    pi 1.6 instead of 0.73.1."""
    package = require_real(real)
    requests = {}
    for who in ("pi", "ours"):
        folder = tmp_path / who
        agent = folder / "agent"
        agent.mkdir(parents=True)
        if prepare is not None:
            prepare(agent)
        run_env = {"PATH": os.environ["PATH"], "HOME": str(folder / "home"), "PI_OFFLINE": "1",
                   "PI_CODING_AGENT_DIR": str(agent), **(env or {})}
        if origins:
            run_env["PI_PROVIDER_ORIGINS"] = json.dumps(origins)
        command = ([node_for(real), "--import", str(SHIM), str(Path(package) / "dist" / "cli.js")] if who == "pi"
                   else [sys.executable, "-m", "pi_plugins.cli"])
        llm_server.push(Reply(text=answer))
        done = subprocess.run([*command, "--model", model, *args, "--no-session", "-p", "Hi"], cwd=folder,
                              env=run_env, capture_output=True, text=True, timeout=90)
        assert done.returncode == 0, f"{who}: {done.stderr}"
        assert done.stdout.strip() == answer
        requests[who] = llm_server.requests[-1]
    return requests["pi"], requests["ours"]
