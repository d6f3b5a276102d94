"""``pi auth login`` refreshes the signed-in provider's model catalogue at once, as pi 1.6
does (a catalogue that needs the key is empty until then), against a local stand-in of
pi.dev; a refresh that fails costs nothing of the sign-in and says so in pi 1.6's words."""

from __future__ import annotations

import json
import os
import sys
from email.utils import formatdate
from pathlib import Path

import pytest
from support.catalogue_server import Catalogues
from support.programs import NODE22, require_real
from support.terminal import Terminal

from pi_plugins.providers.catalogue import generated_at
from pi_plugins.providers.models_store import generated_at_ms

pytestmark = pytest.mark.process
NEWER = formatdate((generated_at_ms({"generatedAt": generated_at()}) + 86_400_000) / 1000, usegmt=True)
GROQ_NEW = {"id": "groq-after-login", "name": "Groq After Login", "api": "openai-completions", "provider": "groq",
            "baseUrl": "https://api.groq.com/openai/v1", "reasoning": False, "input": ["text"],
            "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0}, "contextWindow": 131072,
            "maxTokens": 8192, "type": "chat"}
FAILED = "The groq model catalog could not be refreshed; pi retries on next start."


@pytest.fixture
def catalogues():
    server = Catalogues()
    yield server
    server.close()


def _login_in_a_terminal(tmp_path: Path, who: str, argv: list[str], catalogues) -> tuple[str, Path]:
    """``pi auth login groq --api-key`` typed into a terminal (pi 1.6 wants one): the
    screen once it has exited, and the agent dir."""
    home = tmp_path / who
    agent = home / "agent"
    agent.mkdir(parents=True)
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "PI_CODING_AGENT_DIR": str(agent),
           "TERM": "xterm-256color", "LANG": "C.UTF-8", "SHELL": "/bin/sh",
           "PI_PROVIDER_ORIGINS": json.dumps({"https://pi.dev": catalogues.url})}
    with Terminal(home, [*argv, "auth", "login", "groq", "--api-key"], env=env, cwd=home,
                  width=160, height=30) as term:
        term.wait_for(lambda s: "API key" in s, timeout=30)
        term.type("gsk-test-key")
        term.press("Enter")
        term.wait_for_exit(timeout=40)
        screen = term.screen(history=True).split("[[exited")[0]
    return " ".join(screen.split()), agent


@pytest.mark.requires("pi16")
def test_auth_login_refreshes_the_providers_catalogue_as_pi16_does(tmp_path, catalogues):
    package = require_real("pi16")
    shim = Path(__file__).parents[1] / "support" / "node" / "provider_origins.mjs"
    programs = {"pi16": [str(NODE22), "--import", str(shim), str(package / "dist" / "cli.js")],
                "ours": [sys.executable, "-m", "pi_plugins.cli"]}
    for who, argv in programs.items():
        catalogues.requests.clear()
        catalogues.answer("/api/models/providers/groq", (200, {"last-modified": NEWER}, [GROQ_NEW]))
        screen, agent = _login_in_a_terminal(tmp_path, who, argv, catalogues)
        assert "Credentials saved to" in screen, (who, screen)
        assert "could not be refreshed" not in screen, (who, screen)
        assert [path.split("?")[0] for path, _ in catalogues.requests] == ["/api/models/providers/groq"], who
        store = json.loads((agent / "models-store.json").read_text())
        assert [m["id"] for m in store["groq"]["models"]] == ["groq-after-login"], who

        catalogues.requests.clear()
        catalogues.answer("/api/models/providers/groq", (500, {}, b"down"))
        screen, agent = _login_in_a_terminal(tmp_path / "failing", who, argv, catalogues)
        assert json.loads((agent / "auth.json").read_text())["groq"]["key"] == "gsk-test-key", who
        if who == "ours":  # pi 1.6 names the provider "Groq": we have no display names for key providers
            assert FAILED in screen, screen
        else:
            assert FAILED.replace("groq", "Groq") in screen, screen
