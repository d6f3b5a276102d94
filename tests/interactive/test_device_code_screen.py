"""The chat's device-code screen, as pi 1.6's login dialog: the page, the code and
"(enter to open browser and copy code)"; Enter opens the page in the browser and copies
the code (the clipboard tool and OSC 52), once; the sign-in goes on meanwhile, and
Escape cancels it."""

from __future__ import annotations

import base64
import json
import os
import stat


def _browser(tmp_path):
    """A stand-in browser that notes each page it is asked to open."""
    script = tmp_path / "browser.sh"
    opened = tmp_path / "opened.txt"
    script.write_text(f'#!/bin/sh\necho "$1" >> {opened}\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, opened


def _start_codex_device_sign_in(term):
    term.submit("/login openai-codex")
    term.wait_for("Select OpenAI Codex login method")
    term.press("Down")
    term.press("Enter")  # Device code login (headless)
    return term.wait_for("Enter code: CDX-4321")


def test_enter_opens_the_page_and_copies_the_code_once_while_the_sign_in_goes_on(pi_screen, monkeypatch, tmp_path):
    from support.signin_server import SignInServer

    from pi_plugins.signin import device_code

    monkeypatch.setattr(device_code, "MINIMUM_INTERVAL", 0.01)
    script, opened = _browser(tmp_path)
    monkeypatch.setenv("BROWSER", str(script))
    monkeypatch.setenv("DISPLAY", ":99")  # a graphical session: the browser may open
    monkeypatch.delenv("PI_NO_BROWSER", raising=False)
    with SignInServer() as signin:
        signin.device_polls_pending = 10_000
        monkeypatch.setenv("PI_PROVIDER_ORIGINS", signin.origins())
        term = pi_screen()
        screen = _start_codex_device_sign_in(term)
        assert "Login to OpenAI Codex" in screen
        assert "https://auth.openai.com/codex/device" in screen and "Ctrl+click to open" in screen
        assert "(enter to open browser and copy code)" in screen
        assert "Waiting for authentication..." in screen
        assert not opened.exists()  # pi 1.6 opens the page only on Enter
        term.press("Enter")
        term.wait_for(lambda s: "Code copied to clipboard" in s or "Copy code manually" in s)
        term.press("Enter")  # a second Enter does nothing more
        written = "".join(term.terminal.written)
        assert "\x1b]52;c;" + base64.b64encode(b"CDX-4321").decode() in written
        signin.device_polls_pending = 0  # the user entered the code: the sign-in ends
        term.wait_for("Logged in to ChatGPT Plus/Pro (Codex Subscription)", timeout=15)
    assert opened.read_text().splitlines() == ["https://auth.openai.com/codex/device"]
    agent = os.environ["PI_CODING_AGENT_DIR"]
    assert json.loads(open(os.path.join(agent, "auth.json")).read())["openai-codex"]["type"] == "oauth"


def test_escape_on_the_device_code_screen_cancels_the_sign_in(pi_screen, monkeypatch):
    from support.signin_server import SignInServer

    from pi_plugins.signin import device_code

    monkeypatch.setattr(device_code, "MINIMUM_INTERVAL", 0.01)
    monkeypatch.setenv("PI_NO_BROWSER", "1")
    with SignInServer() as signin:
        signin.device_polls_pending = 10_000
        monkeypatch.setenv("PI_PROVIDER_ORIGINS", signin.origins())
        term = pi_screen()
        _start_codex_device_sign_in(term)
        term.press("Escape")
        screen = term.wait_for(lambda s: "Enter code: CDX-4321" not in s)
        term.wait_idle()
    assert "Logged in" not in screen and "Failed to login" not in screen  # cancelled, quietly as pi 1.6
    auth = os.path.join(os.environ["PI_CODING_AGENT_DIR"], "auth.json")
    assert not os.path.exists(auth) or "openai-codex" not in json.loads(open(auth).read())
