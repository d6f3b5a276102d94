"""``pi serve``: one server holds the sessions; the web page, RPC clients (through
``pi connect``) and editors attach to the same live session at once. The plugin adds
the two subcommands; Starlette and uvicorn load only when ``pi serve`` runs
(``pip install 'pi-harness[serve]'``)."""

from pi_core import hookimpl
from pi_core.protocol.shell import CliCommand


@hookimpl
def register_cli_commands():
    return [
        CliCommand("serve", "pi_plugins.serve.cli:serve_command",
                   "Serve sessions over HTTP and WebSockets, with a web page"),
        CliCommand("connect", "pi_plugins.serve.cli:connect_command",
                   "Bridge stdin/stdout to a served session (as pi --mode rpc)"),
    ]
