"""pi 1.6's program status reports (OSC 7501): idle at start, working during a run, done or
error after it, blocked while a plugin's dialog waits, cleared at exit; sent only where the
terminal answered the support query or ``PI_PROGRAM_STATUS=1`` says so. tmux drops these
reports, so the programs run on a pseudo-terminal whose bytes are all kept."""

import base64
import json
import re
import sys
import time

import pytest

from support.llm_server import Reply
from support.programs import NODE22, require_real
from support.pty_terminal import PtyTerminal

_REPORT = re.compile(r"\x1b\]7501;([^\x07\x1b]*)\x1b\\")


def reports(written: str) -> list[dict]:
    found = []
    for body in _REPORT.findall(written):
        if body.startswith("?"):
            continue  # the support query
        pairs = dict(pair.split("=", 1) for pair in body.split(":"))
        if "msg" in pairs:
            pairs["msg"] = base64.b64decode(pairs["msg"]).decode()
        found.append(pairs)
    return found


def _programs() -> dict[str, list[str]]:
    package = require_real("pi16")
    return {"pi16": [str(NODE22), str(package / "dist" / "cli.js")], "ours": [sys.executable, "-m", "pi_plugins.cli"]}


def _place(tmp_path, server, **extra_env) -> tuple[dict, object]:
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True, exist_ok=True)
    (home / "agent").mkdir(parents=True, exist_ok=True)
    (home / "agent" / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PI_CODING_AGENT_DIR": str(home / "agent"),
           "TERM": "xterm-256color", "LANG": "C.UTF-8", "SHELL": "/bin/sh", **extra_env}
    return env, home / "project"


def _run_one_prompt(argv, env, cwd, reply_text: str, answers_status: bool) -> str:
    with PtyTerminal([*argv, "--approve", "--model", "local/test-model"], env=env, cwd=cwd,
                     answers_status=answers_status) as term:
        term.wait_for("(auto)")
        term.type("hello")
        term.write(b"\r")
        term.wait_for(reply_text)
        reported = env.get("PI_PROGRAM_STATUS") == "1" or (answers_status and env.get("PI_PROGRAM_STATUS") != "0")
        if reported:
            term.wait_for("\x1b]7501;state=done", timeout=10)
        else:
            time.sleep(1)  # a report would come within this
        return term.text()


@pytest.mark.process
def test_a_run_reports_idle_working_and_done_as_pi_16_does(tmp_path, server):
    env, cwd = _place(tmp_path, server)
    seen = {}
    for name, argv in _programs().items():
        server.push(Reply(text="All done here."))
        written = _run_one_prompt(argv, env, cwd, "All done here.", answers_status=True)
        seen[name] = [(r["state"], r.get("app"), r.get("msg")) for r in reports(written)]
    assert seen["ours"] == seen["pi16"] == [("idle", "pi", None), ("working", "pi", None), ("done", "pi", None)]


@pytest.mark.process
def test_no_reports_where_the_terminal_did_not_answer_the_query(tmp_path, server):
    env, cwd = _place(tmp_path, server)
    seen = {}
    for name, argv in _programs().items():
        server.push(Reply(text="Quiet answer."))
        written = _run_one_prompt(argv, env, cwd, "Quiet answer.", answers_status=False)
        seen[name] = ("\x1b]7501;?\x1b\\" in written, reports(written))
    assert seen["ours"] == seen["pi16"] == (True, [])  # asked, not answered: nothing sent


@pytest.mark.process
def test_pi_program_status_1_reports_without_asking_and_0_never(tmp_path, server):
    for value, expected in (("1", ["idle", "working", "done"]), ("0", [])):
        env, cwd = _place(tmp_path, server, PI_PROGRAM_STATUS=value)
        seen = {}
        for name, argv in _programs().items():
            server.push(Reply(text="Forced answer."))
            written = _run_one_prompt(argv, env, cwd, "Forced answer.", answers_status=True)
            seen[name] = ("\x1b]7501;?" in written, [r["state"] for r in reports(written)])
        assert seen["ours"] == seen["pi16"] == (False, expected), value


ASKING_PLUGIN = '''
from pi_core import hookimpl
from pi_core.protocol.commands import Command


async def deploy(args, ctx):
    if await ctx.ui.confirm("Deploy to production?", "target: staging"):
        ctx.ui.notify("Deployed")


@hookimpl
def register_commands():
    return [Command("deploy", "Deploy the app", deploy)]
'''


def _states(term) -> list[tuple]:
    return [(r["state"], r.get("kind"), r.get("msg")) for r in reports("".join(term.terminal.written))]


def test_a_plugins_dialog_reports_blocked_with_its_title_until_answered(pi_screen, server, monkeypatch):
    monkeypatch.setenv("PI_PROGRAM_STATUS", "1")
    term = pi_screen(plugin=ASKING_PLUGIN)
    term.submit("/deploy")
    term.wait_for("Deploy to production?")
    assert _states(term)[-1] == ("blocked", "permission", "Deploy to production?")
    term.press("Enter")
    term.wait_for("Deployed")
    assert _states(term) == [("idle", None, None), ("blocked", "permission", "Deploy to production?"),
                             ("idle", None, None)]


def test_a_failed_run_reports_error_with_the_errors_first_line(pi_screen, server, monkeypatch):
    monkeypatch.setenv("PI_PROGRAM_STATUS", "1")
    server.push(Reply(error="the model refused\nsecond line"))  # an error event in the stream
    term = pi_screen()
    term.submit("hello")
    term.wait_for("the model refused")
    term.wait_idle()
    states = _states(term)
    assert [s[0] for s in states] == ["idle", "working", "error"]
    assert "the model refused" in states[-1][2] and "second line" not in states[-1][2]


def test_working_and_done_carry_the_session_name_never_the_prompt(pi_screen, server, monkeypatch):
    monkeypatch.setenv("PI_PROGRAM_STATUS", "1")
    server.push(Reply(text="Named answer."))
    term = pi_screen()
    term.submit("/name release work")
    term.wait_idle()
    term.submit("a secret prompt")
    term.wait_for("Named answer.")
    term.wait_idle()
    states = _states(term)
    assert states[-2:] == [("working", None, "release work"), ("done", None, "release work")]
    assert not any("secret" in (s[2] or "") or "Named answer" in (s[2] or "") for s in states)


def test_the_status_is_cleared_when_the_chat_ends(pi_screen, server, monkeypatch):
    monkeypatch.setenv("PI_PROGRAM_STATUS", "1")
    term = pi_screen()
    term.wait_idle()
    term.close()  # the chat ends as /quit ends it
    assert reports("".join(term.terminal.written))[-1] == {"state": "clear"}  # no app: pi 1.6's clear


def test_login_reports_blocked_auth_while_the_sign_in_waits(pi_screen, server, monkeypatch):
    """pi 1.6's login dialog reports ``blocked`` (``auth``, "Log in to <provider>") until the
    sign-in ends; the pasted-code question within it keeps that report."""
    from pi_plugins.signin.flows import AnthropicSignIn
    from support.signin_server import SignInServer

    monkeypatch.setenv("PI_PROGRAM_STATUS", "1")
    monkeypatch.setenv("BROWSER", "true")  # no browser opens: the link is shown instead
    monkeypatch.setattr(AnthropicSignIn, "callback_port", 0)
    with SignInServer() as signin:
        monkeypatch.setenv("PI_PROVIDER_ORIGINS", signin.origins())
        term = pi_screen()
        term.submit("/login anthropic")
        term.wait_for("Select authentication method")
        term.press("Enter")  # an account
        term.wait_for("Select Anthropic login method")
        term.press("Enter")  # in the browser
        term.wait_for("Paste redirect URL")
        assert _states(term)[-1] == ("blocked", "auth", "Log in to Anthropic (Claude Pro/Max)")
        term.press("Escape")  # cancelled: the sign-in ends
        term.wait_idle()
        deadline = time.monotonic() + 5
        while _states(term)[-1][0] != "idle" and time.monotonic() < deadline:
            time.sleep(0.05)
    states = _states(term)
    assert ("blocked", "question", "Paste redirect URL below, or complete login in browser:") not in states
    assert states[-1] == ("idle", None, None)
