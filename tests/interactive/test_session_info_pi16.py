"""``/session`` side by side with pi 1.6 in a real terminal: the same ``Session Info``
layout (file and id; messages; tokens; cache warming; the cost) after the same answer,
line for line once the session file's name and id are set aside."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from support.llm_server import Reply
from support.programs import NODE22, require_real
from support.terminal import Terminal, TerminalTimeout

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]
STARTING = "Startup is still in progress"
MODEL = {"id": "test-model", "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}


def _session_info(tmp_path: Path, server, who: str, argv: list[str], replies: tuple = (),
                  prompts: tuple = ("a question",), models: tuple = (MODEL,),
                  model: str = "local/test-model") -> list[str]:
    home = tmp_path / who
    (home / "project").mkdir(parents=True)
    (home / "agent").mkdir()
    (home / "agent" / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key",
                                                                              models=list(models))))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PI_CODING_AGENT_DIR": str(home / "agent"),
           "TERM": "xterm-256color", "LANG": "C.UTF-8", "SHELL": "/bin/sh", "PI_OFFLINE": "1"}
    server.push(*(replies or (Reply(text="Running.", tool_calls=[("bash", {"command": "echo hi"})]),
                              Reply(text="Done now."))))
    with Terminal(home, [*argv, "--approve", "--model", model], env=env, cwd=home / "project",
                  width=120, height=50) as term:
        term.wait_for(model.split("/")[-1], timeout=30)
        for prompt in prompts:
            term.type(prompt)
            answer = "Done now." if prompt == prompts[-1] else "Cached once."
            for _ in range(30):  # pi 1.6 keeps a prompt sent before its start is over in the editor
                term.press("Enter")
                screen = term.wait_for(lambda s: answer in s or STARTING in s, timeout=30)
                if answer in screen:
                    break
                try:  # sent again until the start is over
                    term.wait_for(answer, timeout=2)
                    break
                except TerminalTimeout:
                    pass
        term.type("/session")
        term.press("Enter")
        screen = term.wait_for(lambda s: "Session Info" in s and re.search(r"Total: \$", s), timeout=30, settle=0.5)
    lines = [line.rstrip("┃│ ").strip() for line in screen.splitlines()]  # (our scrollbar aside)
    info = lines[lines.index("Session Info"):]
    end = next(n for n, line in enumerate(info) if line.startswith("Total: $"))
    below = 0  # the cost per model and the re-billed line under the total
    while end + 1 + below < len(info) and re.match(r"[^ ]+: \$|Cache Re-billed:", info[end + 1 + below]):
        below += 1
    info = info[:end + 1 + below]
    ids = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f-]*|\d{4}-\d\d-\d\dT[\d-]+Z_")
    info = [line for line in info if line]
    start, end = info.index("File:"), next(n for n, line in enumerate(info) if line.startswith("ID:"))
    path = "".join(info[start + 1:end])  # the long path wraps where each renderer breaks words
    assert path == str(next((home / "agent" / "sessions").rglob("*.jsonl"))), who
    return [ids.sub("<id>", line) for line in [*info[:start + 1], "<the session file>", *info[end:]]]


def test_session_info_is_laid_out_as_pi16_lays_it_out(tmp_path, server):
    package = require_real("pi16")
    seen = {who: _session_info(tmp_path, server, who, argv) for who, argv in (
        ("pi16", [str(NODE22), str(package / "dist" / "cli.js")]),
        ("ours", [sys.executable, "-m", "pi_plugins.cli"]))}
    assert seen["ours"] == seen["pi16"]
    assert seen["ours"][:2] == ["Session Info", "File:"]
    assert "Messages" in seen["ours"] and "Tokens" in seen["ours"] and "Cache Warming" in seen["ours"]
    assert seen["ours"][-2:] == ["Cost", "Total: $0.000"]


def test_cache_re_billed_is_counted_and_worded_as_pi16s(tmp_path, server):
    """An answer that read 5,000 tokens from the cache, then one whose prompt missed it:
    both programs add pi 1.6's ``Cache Re-billed`` line under the cost."""
    package = require_real("pi16")
    replies = (Reply(text="Cached once.", usage={"input": 100, "cache_read": 5000}),
               Reply(text="Done now.", usage={"input": 5200, "cache_read": 0}))
    seen = {who: _session_info(tmp_path, server, who, argv, replies, ("first", "second")) for who, argv in (
        ("pi16", [str(NODE22), str(package / "dist" / "cli.js")]),
        ("ours", [sys.executable, "-m", "pi_plugins.cli"]))}
    assert seen["ours"] == seen["pi16"]
    assert seen["ours"][-1] == "Cache Re-billed: $0.014 (5,100 tokens, 1 miss)"


def test_a_virtual_models_cost_is_given_per_physical_model_as_pi16_gives_it(tmp_path, server):
    """A virtual model (``router/auto``, the same router in both) routes a short prompt to
    one physical model and a long one to another: ``/session`` names each under the cost."""
    from support.fixtures import FIXTURES

    package = require_real("pi16")
    router = FIXTURES / "virtual_models"
    models = ({**MODEL, "id": "small-model"}, {**MODEL, "id": "big-model", "cost": {**MODEL["cost"], "input": 30, "output": 150}})
    replies = (Reply(text="Cached once."), Reply(text="Done now."))
    prompts = ("short", "a prompt of more than twenty characters")
    seen = {who: _session_info(tmp_path, server, who, argv, replies, prompts, models, "router/auto")
            for who, argv in (
                ("pi16", [str(NODE22), str(package / "dist" / "cli.js"), "-e", str(router / "router.ts")]),
                ("ours", [sys.executable, "-m", "pi_plugins.cli", "-e", str(router / "router.py")]))}
    assert seen["ours"] == seen["pi16"]
    assert seen["ours"][-3:] == ["Total: $0.001", "local/big-model: $0.001 (15 tokens)",
                                 "local/small-model: $0.000 (15 tokens)"]
