"""The chat's component calls in RPC mode, as pi 0.73.1's RPC mode treats them: no-ops,
``custom()`` None, the theme calls' answers, a widget of lines sent and one of a
component factory ignored, ``paste_to_editor`` as ``set_editor_text``; the print mode
runs the same plugin (in-process)."""

import asyncio
import io
import json
import textwrap

from support.cli import parse_run_args, use_environment
from support.llm_server import Reply

PLUGIN = textwrap.dedent('''
    import json
    from pathlib import Path

    from pi_core import hookimpl
    from pi_core.protocol.commands import Command


    class Box:
        def render(self, width):
            return ["box"]


    async def components(args, ctx):
        ui = ctx.ui
        seen = {"custom": await ui.custom(lambda tui, theme, keys, done: Box(), overlay=True)}
        ui.set_footer(lambda tui, theme: Box())
        ui.set_header(lambda tui, theme: Box())
        ui.set_editor_component(lambda tui, theme, keys: Box())
        ui.set_working_message("thinking hard")
        ui.set_working_visible(False)
        ui.set_working_indicator({"frames": ["."], "interval_ms": 100})
        ui.set_hidden_thinking_label("hmm")
        ui.add_autocomplete_provider(lambda current: current)
        ui.set_tools_expanded(True)
        remove = ui.on_terminal_input(lambda data: {"consume": True})
        remove()
        ui.set_widget("factory", lambda tui, theme: Box())  # ignored: not lines
        ui.set_widget("lines", ["one", "two"])
        ui.paste_to_editor("pasted")
        seen.update(editor_component=ui.get_editor_component(), tools_expanded=ui.get_tools_expanded(),
                    themes=ui.get_all_themes(), theme=ui.get_theme("dark"), set_theme=ui.set_theme("light"),
                    styled=ui.theme.fg("accent", "a") + ui.theme.bold("b"), has_ui=ui.has_ui)
        (Path(ctx.cwd) / "seen.json").write_text(json.dumps(seen))
        ui.notify("SEEN " + json.dumps(seen))


    @hookimpl
    def register_commands(ctx):
        return [Command(name="components", description="Every component call", handler=components)]
''')


def seen(notify_line: str) -> dict:
    return json.loads(notify_line.split("SEEN ", 1)[1])


def test_component_calls_in_rpc_mode_are_pis_no_ops_and_fire_and_forget_requests(start_rpc, pi):
    (pi.cwd / "components.py").write_text(PLUGIN)
    rpc = start_rpc("-e", str(pi.cwd / "components.py"))
    assert rpc.request("prompt", message="/components")["success"] is True
    notify = rpc.event("extension_ui_request", method="notify")
    assert seen(notify["message"]) == {
        "custom": None, "editor_component": None, "tools_expanded": False, "themes": [], "theme": None,
        "set_theme": {"success": False, "error": "Theme switching not supported in RPC mode"},
        "styled": "ab", "has_ui": True}
    requests = [(r["method"], r.get("widgetKey"), r.get("widgetLines"), r.get("text"))
                for r in rpc.events("extension_ui_request")]
    # only lines and the editor's text go to the client; every other call sent nothing
    assert requests == [("setWidget", "lines", ["one", "two"], None),
                        ("set_editor_text", None, None, "pasted"),
                        ("notify", None, None, None)]
    assert not rpc.events("extension_error")


class _Stdin(io.StringIO):
    def isatty(self) -> bool:
        return False


def test_component_calls_in_print_mode_do_nothing_and_the_run_goes_on(pi, server, monkeypatch):
    from pi_plugins.cli.main import _run

    use_environment(monkeypatch, pi.env, pi.cwd)
    (pi.cwd / "components.py").write_text(PLUGIN)
    server.push(Reply(text="after the command"))
    flags = pi.flags("-e", str(pi.cwd / "components.py"), "-p", "/components")
    code = asyncio.run(_run(parse_run_args(*flags), stdin=_Stdin(""), stdout=io.StringIO()))
    assert code == 0
    assert json.loads((pi.cwd / "seen.json").read_text()) == {
        "custom": None, "editor_component": None, "tools_expanded": False, "themes": [], "theme": None,
        "set_theme": {"success": False, "error": "UI not available"}, "styled": "ab", "has_ui": False}
