"""The plugin manager: load order, the four dispatch kinds, isolation, discovery."""

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pi_core import Plugins, hookimpl
from pi_core.app.discovery import load_plugins
from pi_core.protocol.events import ToolCallDecision
from pi_core.protocol.tools import Tool

from support.agents import run


def plugin(name, **hooks):
    """A plugin object named ``name`` whose hooks are the given functions."""
    return type(name, (), {k: hookimpl(v) for k, v in hooks.items()})()


def test_handlers_run_in_load_order_with_tryfirst_and_trylast_moving_to_the_ends():
    calls = []
    plugins = Plugins()
    plugins.register(plugin("A", turn_start=lambda self: calls.append("A")))

    class Early:
        @hookimpl(tryfirst=True)
        def turn_start(self):
            calls.append("early")

    class Late:
        @hookimpl(trylast=True)
        def turn_start(self):
            calls.append("late")

    plugins.register(Late())
    plugins.register(plugin("B", turn_start=lambda self: calls.append("B")))
    plugins.register(Early())
    run(plugins.call("turn_start", event=None, ctx=None))
    assert calls == ["early", "A", "B", "late"]


def test_decide_last_result_wins():
    plugins = Plugins()
    plugins.register(plugin("A", before_tool_call=lambda self: ToolCallDecision(reason="A")))
    plugins.register(plugin("B", before_tool_call=lambda self: None))
    plugins.register(plugin("C", before_tool_call=lambda self: ToolCallDecision(reason="C")))
    decision = run(plugins.call("before_tool_call", event=None, ctx=None))
    assert decision.reason == "C"


def test_decide_a_cancel_or_block_result_stops_later_handlers():
    later = []
    plugins = Plugins()
    plugins.register(plugin("Blocker", before_tool_call=lambda self: {"block": True, "reason": "no"}))
    plugins.register(plugin("Later", before_tool_call=lambda self: later.append(1)))
    assert run(plugins.call("before_tool_call", event=None, ctx=None)) == ToolCallDecision(block=True, reason="no")
    plugins2 = Plugins()
    plugins2.register(plugin("Canceller", session_before_fork=lambda self: {"cancel": True}))
    plugins2.register(plugin("Later", session_before_fork=lambda self: later.append(2)))
    assert run(plugins2.call("session_before_fork", event=None, ctx=None)).cancel is True
    assert later == []


def test_chain_passes_each_result_to_the_next_handler_and_none_keeps_the_value():
    plugins = Plugins()
    plugins.register(plugin("Double", context=lambda self, messages: messages * 2))
    plugins.register(plugin("Keep", context=lambda self, messages: None))
    plugins.register(plugin("Append", context=lambda self, messages: messages + ["!"]))
    assert run(plugins.call("context", messages=["x"], ctx=None)) == ["x", "x", "!"]


def test_chain_stops_when_a_result_is_handled():
    from pi_core.protocol.events import InputEvent

    import attrs

    plugins = Plugins()
    plugins.register(plugin("Handle", input=lambda self, event: attrs.evolve(event, handled=True)))
    plugins.register(plugin("Never", input=lambda self, event: attrs.evolve(event, text="changed")))
    result = run(plugins.call("input", event=InputEvent("hi"), ctx=None))
    assert result.handled and result.text == "hi"


def test_collect_gathers_everything_and_a_later_same_name_overrides():
    plugins = Plugins()
    builtin_read = Tool(name="read", description="built-in")
    plugins.register(plugin("Builtins", register_tools=lambda self: [builtin_read, Tool(name="bash")]))
    plugins.register(plugin("User", register_tools=lambda self: Tool(name="read", description="user's")))
    plugins.register(plugin("Nothing", register_tools=lambda self: None))
    tools = run(plugins.call("register_tools", ctx=None))
    assert [(t.name, t.description) for t in tools] == [("read", "user's"), ("bash", "")]
    paths = run(plugins.call("resources_discover", event=None, ctx=None))
    assert paths == []


def test_async_handlers_are_awaited_in_order():
    calls = []

    class Slow:
        @hookimpl
        async def turn_end(self, event):
            await asyncio.sleep(0.02)
            calls.append("slow")

    class Fast:
        @hookimpl
        def turn_end(self, event):
            calls.append("fast")

    class AsyncChain:
        @hookimpl
        async def context(self, messages):
            await asyncio.sleep(0)
            return messages + ["async"]

    plugins = Plugins()
    for p in (Slow(), Fast(), AsyncChain()):
        plugins.register(p)
    run(plugins.call("turn_end", event=None, ctx=None))
    assert calls == ["slow", "fast"]
    assert run(plugins.call("context", messages=[], ctx=None)) == ["async"]


def test_a_raising_handler_is_reported_with_plugin_and_hook_and_skipped(caplog):
    reported = []
    plugins = Plugins()
    plugins.error_listeners.append(reported.append)
    plugins.register(plugin("Broken", context=lambda self, messages: 1 / 0))
    plugins.register(plugin("Fine", context=lambda self, messages: messages + ["fine"]))
    assert run(plugins.call("context", messages=[], ctx=None)) == ["fine"]
    assert [(e.plugin, e.hook) for e in reported] == [("Broken", "context")]
    assert "plugin 'Broken' failed in context: ZeroDivisionError" in caplog.text


def test_a_misspelled_hook_is_reported_and_a_mismatched_one_refused():
    plugins = Plugins()
    plugins.register(plugin("Typo", turn_strat=lambda self, event: None))
    assert plugins.errors[-1].hook == "turn_strat" and "misspelled" in str(plugins.errors[-1])
    # a wrong argument name drops that hook only, not the plugin
    assert plugins.register(plugin("BadArgs", turn_start=lambda self, nonsense: None,
                                   turn_end=lambda self, event: None)) == "BadArgs"
    assert plugins.hooks_of("BadArgs") == ["turn_end"]
    assert plugins.errors[-1].plugin == "BadArgs" and "'nonsense'" in str(plugins.errors[-1])


def test_a_hook_nobody_implements_has_no_handlers_and_costs_no_call():
    plugins = Plugins()
    assert not plugins.has("message_update")
    assert run(plugins.call("message_update", event=None, ctx=None)) is None
    assert run(plugins.call("context", messages=["same"], ctx=None)) == ["same"]


def write_plugin(path, body):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("from pi_core import hookimpl\n" + textwrap.dedent(body))
    return path


def test_load_order_is_builtins_then_user_then_project_then_command_line(tmp_path):
    agent_dir, project = tmp_path / "agent", tmp_path / "project"
    write_plugin(agent_dir / "extensions" / "b_user.py", "@hookimpl\ndef turn_start(): pass\n")
    write_plugin(agent_dir / "extensions" / "a_user.py", "@hookimpl\ndef turn_start(): pass\n")
    write_plugin(project / ".pi" / "extensions" / "proj.py", "@hookimpl\ndef turn_start(): pass\n")
    cli = write_plugin(tmp_path / "cli_plugin.py", "@hookimpl\ndef turn_start(): pass\n")
    from pi_core.app.discovery import load_project_plugins
    from pi_core.app.settings import Settings

    trusted = Settings.load(project, agent_dir, project_trusted=True)
    plugins = load_plugins(cwd=project, agent_dir=agent_dir, extension_paths=[cli], settings=trusted)
    names = [(i.name, i.source) for i in plugins.infos]
    builtins = [n for n, s in names if s == "builtin"]
    assert builtins and names[: len(builtins)] == [(n, "builtin") for n in builtins]
    assert [n for n, s in names if s in ("file", "cli")] == ["a_user", "b_user", "proj", "cli_plugin"]
    assert names[-1] == ("cli_plugin", "cli")
    # untrusted, the project's plugin is left out; trusted later, the order is the same
    untrusted = Settings.load(project, agent_dir, project_trusted=False)
    later = load_plugins(cwd=project, agent_dir=agent_dir, extension_paths=[cli], settings=untrusted)
    assert "proj" not in [i.name for i in later.infos]
    load_project_plugins(later, settings=trusted)
    assert [(i.name, i.source) for i in later.infos] == names


def test_no_extensions_skips_discovered_plugins_but_explicit_paths_still_load(tmp_path):
    agent_dir = tmp_path / "agent"
    write_plugin(agent_dir / "extensions" / "user.py", "@hookimpl\ndef turn_start(): pass\n")
    cli = write_plugin(tmp_path / "explicit.py", "@hookimpl\ndef turn_start(): pass\n")
    plugins = load_plugins(cwd=tmp_path, agent_dir=agent_dir, extension_paths=[cli], discover=False)
    names = [i.name for i in plugins.infos]
    assert "user" not in names and "explicit" in names


def test_a_plugin_file_that_fails_to_import_is_reported_and_others_load(tmp_path):
    agent_dir = tmp_path / "agent"
    write_plugin(agent_dir / "extensions" / "broken.py", "raise ImportError('needs foo')\n")
    write_plugin(agent_dir / "extensions" / "good.py", "@hookimpl\ndef turn_start(): pass\n")
    plugins = load_plugins(cwd=tmp_path, agent_dir=agent_dir)
    assert "good" in [i.name for i in plugins.infos]
    assert any(e.plugin == "broken" and "needs foo" in str(e) for e in plugins.errors)


@pytest.mark.process
def test_a_third_party_wheel_installed_into_a_venv_is_discovered_through_its_entry_point(tmp_path, sample_venv):
    python = sample_venv  # pi-zeta and pi-alpha 1.2.3 (given in that order) are installed there
    out = subprocess.run(
        [python, "-m", "pi_plugins.cli", "plugins", "--json"], cwd=tmp_path, capture_output=True,
        text=True, env={"PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr
    listed = json.loads(out.stdout)["plugins"]
    third = [p for p in listed if p["source"] == "entry point" and p["distribution"] in ("pi-alpha", "pi-zeta")]
    assert [(p["name"], p["distribution"], p["version"], p["hooks"]) for p in third] == [
        ("alpha", "pi-alpha", "1.2.3", ["register_tools"]),
        ("zeta", "pi-zeta", "1.2.3", ["register_tools"]),
    ]
    assert [p["source"] for p in listed].index("entry point") > 0  # after the built-ins
    # And the discovered tool really reaches an agent in that environment.
    script = (
        "import asyncio\n"
        "from pi_core.app.discovery import load_plugins\n"
        "from pi_core import Agent\n"
        "from pi_core.testing import scripted_model\n"
        "agent = Agent(model=scripted_model(), plugins=load_plugins(), providers=[])\n"
        "asyncio.run(agent.setup())\n"
        "print(sorted(t.name for t in agent.tools))\n"
    )
    out = subprocess.run([python, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                         env={"PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert "pi_alpha_tool" in out.stdout and "pi_zeta_tool" in out.stdout


@pytest.mark.process
def test_pi_plugins_lists_builtins_with_their_hooks_and_a_cli_plugin(tmp_path):
    extra = write_plugin(tmp_path / "mine.py", "@hookimpl\ndef turn_end(event): pass\n")
    out = subprocess.run(
        [sys.executable, "-m", "pi_plugins.cli", "plugins", "-e", str(extra)], cwd=tmp_path,
        capture_output=True, text=True, env={"PI_CODING_AGENT_DIR": str(tmp_path / "agent"),
                                             "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr
    assert "app_messages  (builtin, pi-harness" in out.stdout
    assert "hooks: convert_to_llm" in out.stdout
    assert f"mine  (cli)  {extra}" in out.stdout and "hooks: turn_end" in out.stdout


@pytest.mark.process
def test_the_installed_pi_script_lists_the_builtin_plugins(tmp_path):
    script = Path(sys.executable).parent / "pi"
    assert script.exists(), "pi-harness is not installed in this environment (README install command)"
    out = subprocess.run([script, "plugins"], cwd=tmp_path, capture_output=True, text=True,
                         env={"PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert "app_messages  (builtin" in out.stdout


def test_builtins_load_in_the_order_their_one_list_gives():
    from pi_core.app.builtins import BUILTINS

    loaded = [(i.name, i.location) for i in load_plugins(discover=False).infos if i.source == "builtin"]
    assert loaded == list(BUILTINS.items())


@pytest.mark.process
def test_what_loading_plugins_imported_is_left_out_of_later_collections(tmp_path):
    """Imported plugins live as long as the process: frozen (``gc.freeze``) once a load
    has imported them, so that no collection afterwards walks them again; a load that
    imports nothing new freezes nothing (a server's later sessions)."""
    script = ("import gc\n"
              "from pi_core.app.discovery import load_plugins\n"
              "load_plugins(discover=False)\n"
              "first = gc.get_freeze_count()\n"
              "gc.unfreeze()\n"
              "load_plugins(discover=False)\n"
              "print(first > 1000, gc.get_freeze_count())\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          env={"PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "0"]


def test_an_older_install_declaring_the_builtins_as_entry_points_loads_none_twice(tmp_path, monkeypatch):
    """pi-harness's metadata from before the one list (its built-ins as entry points, in
    name order) adds nothing; an entry point of its own that the list lacks still loads."""
    (tmp_path / "pi_extra_builtin.py").write_text("from pi_core import hookimpl\n\n@hookimpl\ndef turn_start(): pass\n")
    info = tmp_path / "pi_harness-0.0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pi-harness\nVersion: 0.0.1\n")
    (info / "entry_points.txt").write_text(
        "[pi.plugins]\ncompaction = pi_plugins.compaction\nextra = pi_extra_builtin\ntools = pi_plugins.tools\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    names = [(i.name, i.source) for i in load_plugins(cwd=tmp_path, agent_dir=tmp_path / "agent").infos]
    assert names.count(("tools", "builtin")) == 1 and names.count(("compaction", "builtin")) == 1
    assert [n for n, s in names if s != "builtin"] == ["extra"]


def test_adding_a_hook_is_one_decorated_spec_plus_one_call():
    import types

    from hookspecs import decide, hookspec

    @hookspec
    @decide(result="pi_core.protocol.results:cancel_decision")
    def before_deploy(event, ctx):
        """Kind: decide. A deploy is about to start; cancel to stop it."""

    Specs = types.ModuleType("deploy_specs")
    Specs.before_deploy = before_deploy

    class Veto:
        @hookimpl
        def before_deploy(self, event):
            return {"cancel": event == "prod"}

    plugins = Plugins()
    plugins.pm.add_hookspecs(Specs)
    plugins.register(Veto(), "veto")
    assert run(plugins.call("before_deploy", event="prod", ctx=None)).cancel is True
    assert run(plugins.call("before_deploy", event="dev", ctx=None)).cancel is False
    assert plugins.dispatch("before_deploy").describe() == "decide"


def test_pi_plugins_overrides_name_the_winner():
    from pi_plugins.cli.plugins_command import collect_overrides

    plugins = Plugins()
    plugins.register(plugin("tools", register_tools=lambda self: [Tool(name="read")]))
    plugins.register(plugin("my_plugin", register_tools=lambda self: [Tool(name="read")]))
    assert run(collect_overrides(plugins, None)) == [
        {"hook": "register_tools", "key": "read", "winner": "my_plugin", "replaces": ["tools"]}]


def test_pi_plugins_leaves_out_collect_hooks_that_need_a_run(tmp_path):
    """``pi plugins`` has no settings to hand ``discover_models`` (and must not probe
    local servers): it reports that hook's plugins without calling it, and no error."""
    from pi_plugins.cli.plugins_command import collect_overrides

    calls = []
    plugins = Plugins()
    plugins.register(plugin("local", discover_models=lambda self, settings: calls.append(1)))
    assert run(collect_overrides(plugins, None)) == []
    assert calls == [] and list(plugins.errors) == []
