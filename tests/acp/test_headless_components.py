"""The chat's component calls in ACP mode answer as pi's RPC mode's (pi-acp runs pi in
that mode): a plugin made for the chat runs in an editor without failing."""

import asyncio

from pi_plugins.acp.ui import AcpUI


def test_component_calls_in_acp_mode_are_pis_rpc_no_ops():
    ui = AcpUI(lambda: None, lambda: None)
    assert asyncio.run(ui.custom(lambda tui, theme, keys, done: None, overlay=True)) is None
    for call, args in [("set_footer", (None,)), ("set_header", (None,)), ("set_editor_component", (None,)),
                       ("set_working_message", ("x",)), ("set_working_visible", (False,)),
                       ("set_working_indicator", ({"frames": []},)), ("set_hidden_thinking_label", ("x",)),
                       ("add_autocomplete_provider", (lambda c: c,)), ("set_tools_expanded", (True,)),
                       ("paste_to_editor", ("x",))]:
        assert getattr(ui, call)(*args) is None
    ui.on_terminal_input(lambda data: None)()
    assert (ui.get_editor_component(), ui.get_tools_expanded(), ui.get_all_themes(), ui.get_theme("dark")) == \
        (None, False, [], None)
    assert ui.set_theme("light") == {"success": False, "error": "Theme switching not supported in RPC mode"}
    assert ui.theme.fg("accent", "plain") == "plain" and ui.has_ui is True
