"""The flags pi 0.73.1 has that clients pass (pi-acp always starts ``pi --mode rpc
--no-themes``), the bare ``--version``, and a missing key said before any request."""

import pytest
import json
import subprocess
import sys
import time

from pi_core import __version__
from support.llm_server import Reply

TOOL_PLUGIN = '''
from pi_core import hookimpl, tool


@tool(description="Say hi")
def hello(args, run):
    return "hi"


@hookimpl
def register_tools():
    return [hello]
'''


def _tool_names(request) -> list[str]:
    return sorted(t["function"]["name"] for t in request.body.get("tools", []))


@pytest.mark.process
def test_version_prints_the_bare_version_where_pi_prints_it(pi):
    # from a program (stdin not a terminal) pi keeps stdout for the protocol: stderr
    out = pi.run("--version")
    assert out.returncode == 0 and out.stdout == "" and out.stderr == f"{__version__}\n"
    assert pi.run("-v").stderr == f"{__version__}\n"
    # from a terminal, on stdout
    import os

    primary, secondary = os.openpty()
    try:
        out = subprocess.run(pi.command("--version"), cwd=pi.cwd, env=pi.env, stdin=secondary,
                             capture_output=True, text=True, timeout=60)
    finally:
        os.close(primary)
        os.close(secondary)
    assert out.returncode == 0 and out.stdout == f"{__version__}\n"


@pytest.mark.process
def test_no_themes_and_theme_are_accepted_as_pi_accepts_them(pi, server, tmp_path):
    theme = tmp_path / "mine.json"
    theme.write_text(json.dumps({"name": "mine", "vars": {}, "colors": {}}))
    server.push(Reply(text="themed"), Reply(text="plain"))
    out = pi.run("--theme", str(theme), "-p", "hi")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "themed\n"
    out = pi.run("--no-themes", "-p", "hi")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "plain\n"
    for flag in ("--theme", "--no-themes", "--no-builtin-tools", "-nbt"):
        assert flag in pi.run("--help").stdout


@pytest.mark.process
def test_no_builtin_tools_keeps_plugin_tools_only(pi, server):
    (pi.cwd / "hello_plugin.py").write_text(TOOL_PLUGIN)
    server.push(Reply(text="a"), Reply(text="b"), Reply(text="c"))
    plugin = ("-e", str(pi.cwd / "hello_plugin.py"))
    assert pi.run(*plugin, "-p", "hi").returncode == 0
    assert pi.run(*plugin, "-nbt", "-p", "hi").returncode == 0
    assert pi.run(*plugin, "--no-builtin-tools", "-p", "hi").returncode == 0
    default, short, long = (_tool_names(r) for r in server.requests)
    assert default == ["bash", "edit", "hello", "read", "write"]
    assert short == long == ["hello"]


@pytest.mark.process
def test_a_missing_key_is_said_before_any_request(pi):
    env = {k: v for k, v in pi.env.items() if not k.endswith("_API_KEY")}
    started = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "pi_plugins.cli", "--model", "openai/gpt-4o-mini", "-p", "hi"],
                         cwd=pi.cwd, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    assert "No API key found for openai" in out.stderr and "OPENAI_API_KEY" in out.stderr
    assert "Connection error" not in out.stderr and out.stdout == ""
    assert time.monotonic() - started < 10  # no connection was tried (it would hang or fail later)
    assert pi.sessions() == []  # nothing was recorded
