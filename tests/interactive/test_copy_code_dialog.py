"""The chat's Anthropic copy-code sign-in in its one login dialog: Ctrl+X copies the link
(OSC 52), the pasted ``code#state`` (mistakes taken back with Backspace) signs in, and
Escape cancels quietly, storing nothing."""

from __future__ import annotations

import base64
import json
import os
import re

from auth.test_copy_code_pi16 import _shown_code


def _start_copy_code_sign_in(term):
    term.submit("/login anthropic")
    term.wait_for("Select authentication method for")
    term.press("Enter")  # the subscription
    term.wait_for("Copy code login (headless)")
    term.press("Down")
    term.press("Enter")
    return term.wait_for(lambda s: "after you sign in:" in s and "(escape/ctrl+c to cancel)" in s)


def test_the_copied_link_gives_the_code_to_paste_and_the_pasted_code_signs_in(pi_screen, monkeypatch):
    from support.signin_server import SignInServer

    monkeypatch.setenv("PI_NO_BROWSER", "1")
    with SignInServer() as signin:
        monkeypatch.setenv("PI_PROVIDER_ORIGINS", signin.origins())
        term = pi_screen()
        screen = _start_copy_code_sign_in(term)
        assert "Login to Anthropic" in screen and "Ctrl+click to open • ctrl+x to copy" in screen
        assert "Complete login in your browser, then copy the code Anthropic shows" in screen
        term.press("C-x")
        term.wait_for(lambda s: "Copied URL to clipboard" in s or "No clipboard available" in s)
        copied = re.findall(r"\x1b\]52;c;([A-Za-z0-9+/=]+)\x07", "".join(term.terminal.written))[-1]
        link = base64.b64decode(copied).decode()
        assert link.startswith(signin.url + "/oauth/authorize?")
        term.type(_shown_code(link) + "x")
        term.press("BSpace")
        term.press("Enter")
        term.wait_for("Logged in to Anthropic", timeout=15)
    agent = os.environ["PI_CODING_AGENT_DIR"]
    assert json.loads(open(os.path.join(agent, "auth.json")).read())["anthropic"]["type"] == "oauth"


def test_escape_in_the_copy_code_dialog_cancels_the_sign_in(pi_screen, monkeypatch):
    from support.signin_server import SignInServer

    monkeypatch.setenv("PI_NO_BROWSER", "1")
    with SignInServer() as signin:
        monkeypatch.setenv("PI_PROVIDER_ORIGINS", signin.origins())
        term = pi_screen()
        _start_copy_code_sign_in(term)
        term.press("Escape")
        screen = term.wait_for(lambda s: "after you sign in:" not in s)
        term.wait_idle()
    assert "Logged in" not in screen and "Failed to login" not in screen  # quietly, as pi 1.6
    auth = os.path.join(os.environ["PI_CODING_AGENT_DIR"], "auth.json")
    assert not os.path.exists(auth) or "anthropic" not in json.loads(open(auth).read())
