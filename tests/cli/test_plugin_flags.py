"""Plugins' command-line flags (``register_flags``): a result that is no ``Flag`` is
reported with the plugin and the hook, and ``pi --help`` lists the flags of the plugins
that would load (``-e``, discovered ones), as pi's ``--help`` lists its extensions'."""

import subprocess
import sys
from pathlib import Path

import pytest

from support.llm_server import Reply

pytestmark = pytest.mark.process

FLAGS_PLUGIN = '''
from pi_core import hookimpl
from pi_core.protocol.commands import Flag


class NotAFlag:
    name = "loud"


@hookimpl
def register_flags():
    return [NotAFlag(), Flag("plan", "Start in plan mode"),
            Flag("persona", "Answer as this persona", type="string", default="")]


@hookimpl
def session_start(ctx):
    print(f"plan={ctx.get_flag('plan')!r}", flush=True)
'''


def write_plugin(folder):
    path = folder / "flags_plugin.py"
    path.write_text(FLAGS_PLUGIN)
    return path


def help_text(pi, *args) -> subprocess.CompletedProcess:
    return subprocess.run(pi.command(*args, "--help"), cwd=pi.cwd, env=pi.env,
                          capture_output=True, text=True, timeout=60)


def test_a_register_flags_result_that_is_not_a_flag_is_reported_and_the_others_work(pi, server, tmp_path):
    plugin = write_plugin(tmp_path)
    server.push(Reply(text="Hello."))
    done = pi.run("-e", str(plugin), "--plan", "-p", "hi")
    assert done.returncode == 0, done.stderr
    assert "plan=True" in done.stdout
    assert "flags_plugin" in done.stderr and "register_flags" in done.stderr
    assert "NotAFlag" in done.stderr


def test_help_lists_the_flags_of_a_plugin_given_with_e(pi, tmp_path):
    plugin = write_plugin(tmp_path)
    shown = help_text(pi, "-e", str(plugin))
    assert shown.returncode == 0, shown.stderr
    assert "Plugin flags:" in shown.stdout
    lines = shown.stdout.splitlines()
    assert any(l.split()[:1] == ["--plan"] and "Start in plan mode" in l for l in lines), shown.stdout
    assert any(l.split()[:2] == ["--persona", "VALUE"] and "Answer as this persona" in l for l in lines)
    assert "--loud" not in shown.stdout


def test_help_lists_the_flags_of_a_discovered_plugin_unless_extensions_are_off(pi):
    console_script = [str(Path(sys.executable).parent / "pi"), "--help"]  # what pip installed

    def console_help() -> str:
        return subprocess.run(console_script, cwd=pi.cwd, env=pi.env, capture_output=True,
                              text=True, timeout=60).stdout

    assert "--model" in console_help() and "--plan" not in console_help()  # the help without plugins
    (pi.agent_dir / "extensions").mkdir()
    write_plugin(pi.agent_dir / "extensions")
    assert "--plan" in help_text(pi).stdout
    assert "--plan" in console_help()
    assert "--plan" not in help_text(pi, "--no-extensions").stdout


def test_plain_help_lists_the_built_in_plugins_flags_and_no_others(pi):
    import re

    shown = help_text(pi)
    assert shown.returncode == 0 and "--model" in shown.stdout
    section = shown.stdout.split("Plugin flags:", 1)[1].split("\n\n", 1)[0]
    # the budget plugin's and the mcp plugin's; a plugin of one's own would add its own here
    assert re.findall(r"^\s+(--[\w-]+)", section, re.M) == ["--max-cost", "--max-tokens", "--max-turns",
                                                          "--no-mcp"]
