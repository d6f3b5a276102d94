"""Anthropic's copy-code sign-in in ``pi auth login anthropic --no-browser``, side by side
with pi 1.6 in a real terminal (1.6 wants one), a local stand-in for Anthropic's
authorize page and token endpoint: the same lines up to the paste, then signed in."""

from __future__ import annotations

import json
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from support.programs import NODE22, require_real
from support.signin_server import SignInServer
from support.terminal import Terminal

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]

SHIM = Path(__file__).parents[1] / "support" / "node" / "provider_origins.mjs"
#: The printed link: pi 1.6 prints Anthropic's own (its requests alone go to the stand-in),
#: ours the stand-in's (PI_PROVIDER_ORIGINS rewrites it).
LINK = re.compile(r"(?:https://claude\.ai|http://127\.0\.0\.1:\d+)(/oauth/authorize\S+)")


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def _shown_code(link: str) -> str:
    try:
        urllib.request.build_opener(NoRedirect).open(link, timeout=5)
    except urllib.error.HTTPError as exc:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(exc.headers["Location"]).query)
    return f"{query['code'][0]}#{query['state'][0]}"


def _sign_in(tmp_path: Path, who: str, argv: list[str], server: SignInServer) -> list[str]:
    home = tmp_path / who
    (home / "agent").mkdir(parents=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PI_CODING_AGENT_DIR": str(home / "agent"),
           "TERM": "xterm-256color", "LANG": "C.UTF-8", "PI_OFFLINE": "1", "PI_PROVIDER_ORIGINS": server.origins()}
    with Terminal(home, [*argv, "auth", "login", "anthropic", "--no-browser"], env=env, cwd=home,
                  width=1000, height=40) as term:
        screen = term.wait_for("(code#state):", timeout=60)
        term.type(_shown_code(server.url + LINK.search(screen).group(1)))
        term.press("Enter")
        status, _ = term.wait_for_exit(timeout=60)
        assert status == 0, term.screen(history=True)
    assert json.loads((home / "agent" / "auth.json").read_text())["anthropic"]["type"] == "oauth"
    lines = [line.rstrip() for line in screen.splitlines() if line.strip()]
    return [LINK.sub("LINK", line) for line in lines if "auth login" not in line]


def test_the_copy_code_sign_in_says_what_pi16_says(tmp_path):
    package = require_real("pi16")
    with SignInServer() as server:
        seen = {who: _sign_in(tmp_path, who, argv, server) for who, argv in (
            ("pi16", [str(NODE22), "--import", str(SHIM), str(package / "dist" / "cli.js")]),
            ("ours", [sys.executable, "-m", "pi_plugins.cli"]))}
    assert seen["ours"] == seen["pi16"], seen
    assert seen["ours"][-1] == "Paste the code Anthropic shows after you sign in: (code#state):"
