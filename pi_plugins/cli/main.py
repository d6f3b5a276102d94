"""The ``pi`` command line (click). Kept light at import: ``pi --help`` must be quick.

``pi [options] [@files...] [messages...]`` runs the agent; ``pi plugins`` (and the
other subcommands) manage plugins. Anything that is not a subcommand goes to the agent.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

from pi_plugins.cli.plugins_command import plugins_command

if TYPE_CHECKING:
    pass

MODES_HELP = ("text (default: interactive, or print with -p), json, rpc, acp (for editors), "
              "or a mode a plugin registers")


class RunCommand(click.Command):
    """The agent command: its usage line reads like pi's."""

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage("pi", "[OPTIONS] [@FILES...] [MESSAGES...]")

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["pi.args"] = list(args)  # --help is answered while parsing: it reads -e here
        return super().parse_args(ctx, args)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_options(ctx, formatter)
        # the flags of the plugins that would load (pi_plugins.cli.help_flags)
        from pi_plugins.cli.help_flags import format_flags, plugin_flags

        format_flags(plugin_flags(ctx.meta.get("pi.args", [])), formatter)


class PiGroup(click.Group):
    """Subcommands by name; everything else is ``pi [options] [messages...]``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and _could_be_command(args[0]):
            from pi_plugins.cli.subcommands import near_miss, plugin_cli_commands

            offered = plugin_cli_commands()  # the plugins' subcommands (register_cli_commands)
            if args[0] in offered:
                self.add_command(offered[args[0]].load(), args[0])
            elif args[0] in PI_SUBCOMMANDS:  # pi's own word: never a message to the model
                raise click.UsageError(
                    f'"pi {args[0]}" is a pi command, but no loaded plugin provides it (is its '
                    f"plugin dropped, e.g. with -builtin:NAME or plugins.disabled?). {_AS_PROMPT}", ctx)
            else:  # one slip from a subcommand (pi serv, pi mcpp, pi help): not sent either
                meant = near_miss(args[0], [*offered, *PI_SUBCOMMANDS, *(n for n in self.commands if n != "run")])
                if meant is not None:
                    raise click.UsageError(f'"{args[0]}" is not a pi command. Did you mean "{meant}"? '
                                           f"{_AS_PROMPT}", ctx)
        if not args or args[0] not in self.commands:
            args = ["run", *args]
        return super().parse_args(ctx, args)


_AS_PROMPT = "To send the word to the model, quote it in a longer message or give it after --."

#: pi 1.6's subcommands (``pi --help``): a first word among them is a command, never a
#: prompt, even where no plugin provides it now.
PI_SUBCOMMANDS = frozenset({"install", "remove", "uninstall", "update", "list", "config", "auth", "mcp"})


def _could_be_command(word: str) -> bool:
    """A bare lowercase word: only then are the plugins asked for a subcommand of that
    name (``pi -p ...`` and ``pi --help`` never load them here)."""
    return word.replace("-", "").isalnum() and word.islower() and not word.startswith("-")



@click.group(cls=PiGroup, context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """pi: a minimal, self-extensible coding-agent harness."""


main.add_command(plugins_command)


def _print_version(ctx: click.Context) -> None:
    """``--version`` among other arguments (alone, :mod:`pi_plugins.cli.entry` answers it)."""
    from pi_plugins.cli.entry import print_version

    print_version()
    ctx.exit(0)


def _flag(*names: str, **kwargs):
    return click.option(*names, is_flag=True, default=False, **kwargs)


# Unknown options pass through: plugins' flags (register_flags) are read once they load.
@main.command("run", cls=RunCommand, hidden=True, context_settings={
    "help_option_names": ["-h", "--help"], "ignore_unknown_options": True},
              epilog="Subcommands: pi install|remove|update|list (Python plugins and pi's npm/git packages), "
                     "pi config (resources), pi auth (sign-ins and keys), pi mcp (MCP servers), pi plugins "
                     "(loaded plugins), pi batch (many agents), pi serve and pi connect (the web page and its "
                     "clients), pi export (a session as HTML), and those installed plugins add; "
                     "pi <subcommand> --help.")
@click.argument("messages", nargs=-1)
@click.option("--provider", help="Provider name.")
@click.option("--model", help='Model pattern or id ("provider/id", optional ":<thinking>").')
@click.option("--api-key", help="API key (else auth.json, the environment, models.json).")
@click.option("--system-prompt", help="Replace the base system prompt (text or a file).")
@click.option("--append-system-prompt", multiple=True, help="Append text or a file to the system prompt (repeatable).")
@click.option("--mode", default="text", help=MODES_HELP)
@_flag("-p", "--print", "print_", help="Process the prompt, print the answer and exit.")
@click.option("--events", type=click.Choice(["lean", "full"]), default=None,
              help="message_update lines: lean (pi 1.6's: the delta and the usage so far; "
                   "the default) or full (pi 0.73's, with message snapshots).")
@_flag("-c", "--continue", "continue_session", help="Continue the most recent session.")
@_flag("-r", "--resume", help="Choose a session to resume.")
@click.option("--session", help="Use a session file or a session id prefix.")
@click.option("--session-id", metavar="ID", help="Open this project's session with this id, or create it.")
@click.option("--fork", help="Fork a session file or id prefix into a new session.")
@click.option("--session-dir", help="Folder for session files.")
@_flag("--no-session", help="Do not save the session.")
@click.option("-n", "--name", help="Set the session's display name.")
@click.option("--models", help="Comma-separated model patterns for cycling.")
@_flag("-nt", "--no-tools", help="Start with no tools enabled.")
@_flag("-nbt", "--no-builtin-tools", help="Start without the built-in tools; plugin tools stay enabled.")
@click.option("-t", "--tools", help="Comma-separated allow-list of tool names or patterns (*); "
              "only +name/-name entries change the default set instead.")
@click.option("-xt", "--exclude-tools", help="Comma-separated tool names or patterns to turn off, after the other tool flags.")
@click.option("--thinking", type=click.Choice(["off", "minimal", "low", "medium", "high", "xhigh", "max"]),
              help="Thinking level (max: pi 1.6's level above xhigh, where the model names one).")
@click.option("-e", "--extension", "extensions", multiple=True, help="Load a plugin file or package directory (repeatable).")
@_flag("-ne", "--no-extensions", help="Skip plugin discovery (explicit -e still loads).")
@click.option("--skill", "skills", multiple=True, help="Load a skill file or folder (repeatable).")
@_flag("-ns", "--no-skills", help="Do not discover skills.")
@click.option("--prompt-template", "prompt_templates", multiple=True, help="Load a prompt template file or folder (repeatable).")
@_flag("-np", "--no-prompt-templates", help="Do not discover prompt templates.")
@click.option("--theme", "themes", multiple=True, help="Load a theme file or folder (repeatable).")
@click.option("--use-theme", metavar="NAME[/NAME]",
              help="The chat's theme for this run (light/dark: a pair, by the terminal's background); not saved.")
@_flag("--no-themes", help="Do not discover or load themes.")
@click.option("--tui-mode", type=click.Choice(["fullscreen", "regular"]), default=None,
              help="The chat's terminal mode: fullscreen (the alternate screen; pi 1.6's default) "
                   "or regular (the terminal's scrollback); else the tuiMode setting.")
@_flag("-nc", "--no-context-files", help="Do not load AGENTS.md / CLAUDE.md.")
@click.option("--export", help="Export a session file to HTML and exit (pi --export FILE [OUT]).")
@click.option("--list-models", is_flag=False, flag_value="", default=None, metavar="[SEARCH]",
              help="List available models (optionally matching SEARCH) and exit.")
@_flag("--verbose", help="Verbose start-up.")
@_flag("--offline", help="No start-up network use: missing pi packages are not installed (PI_OFFLINE=1).")
@click.option("-a/-na", "--approve/--no-approve", "approve", default=None,
              help="Trust (or ignore) the project's .pi resources and extensions for this run.")
@click.option("-v", "--version", is_flag=True, expose_value=False, is_eager=True,
              callback=lambda ctx, _, value: _print_version(ctx) if value else None,
              help="Print the version and exit.")
def run_command(messages, print_, **flags) -> None:
    """pi: a minimal, self-extensible coding agent. Chats in the terminal, or answers
    once with -p; --mode json and --mode rpc serve programs."""
    import gc

    global _starting
    _starting = gc.isenabled()  # no collection until the app is built (_started)
    gc.disable()
    try:
        _run_command(messages, print_, flags)
    finally:
        _started()


#: Whether collections wait for the app to be built (:func:`_started`).
_starting = False


def _started() -> None:
    """The app is built (or the command ends): what the start imported and built lives
    as long as the process, so it is frozen (``gc.freeze``) and collections resume; no
    collection walked it meanwhile, nor will one later (a tenth of a ``pi -p`` went to
    collections that found nothing to free)."""
    import gc

    global _starting
    if _starting:
        _starting = False
        gc.freeze()
        gc.enable()


def _run_command(messages, print_, flags) -> None:
    import asyncio

    from pi_plugins.cli.run_args import FlagError, RunArgs, check_flags

    args = RunArgs(messages=list(messages), print=print_, **flags)
    try:
        check_flags(args)
    except FlagError as exc:  # in pi 1.6's words, with its exit code
        click.echo(f"Error: {exc}", err=True)
        sys.exit(1)
    if args.offline:  # as pi 1.6's main: what runs later (package installs at start-up) sees it
        os.environ["PI_OFFLINE"] = "1"
    if args.export:
        export_output = args.messages[0] if args.messages else None
        sys.exit(_export(args.export, export_output))
    if args.list_models is not None:
        from pi_plugins.cli.list_models import list_models

        sys.exit(asyncio.run(list_models(args)))
    sys.exit(asyncio.run(_run(args)))


def _usage_failed(exc: Exception) -> int:
    """Say what was wrong with the request: in pi 1.6's words and exit code (1) where we
    match it, else ours (2)."""
    from pi_plugins.cli.run_args import FlagError, PiRefusal, QuietExit

    if isinstance(exc, QuietExit):
        return 0
    if isinstance(exc, PiRefusal):
        click.echo(str(exc), err=True)
        return 1
    if isinstance(exc, FlagError):
        click.echo(f"Error: {exc}", err=True)
        return 1
    click.echo(f"error: {exc}", err=True)
    return 2


async def _run(args, stdin=None, stdout=None) -> int:
    """Build the app and run its mode; ``stdin``/``stdout`` (default: the process's)
    let a caller drive a mode in-process, as the RPC tests do."""
    import asyncio

    from pi_plugins.cli.run_args import UsageError
    from pi_plugins.cli.wiring import build_app

    stdin_tty = (stdin or sys.stdin).isatty()
    chat = not args.print and args.mode == "text" and stdin_tty
    trust_ui = None
    if chat and sys.stdout.isatty():  # only the chat can ask whether to trust the project
        from pi_plugins.cli.terminal_ui import TerminalUI

        trust_ui = TerminalUI(stdin or sys.stdin, stdout or sys.stdout)
    try:
        app = await build_app(args, trust_ui=trust_ui, chat=chat)
    except UsageError as exc:
        return _usage_failed(exc)
    finally:
        _started()
    app.stdin = stdin or app.stdin
    app.stdout = stdout or app.stdout
    # as in pi: without -p the chat runs, unless stdin is not a terminal (then print mode)
    interactive = not args.print and app.stdin.isatty()
    name = args.mode if args.mode != "text" else ("interactive" if interactive else "text")
    modes = await app.plugins.call("register_modes", ctx=app.harness.ctx)
    mode = next((m for m in modes if m.name == name), None)
    stop = _StopOnSignal(app.harness, interrupt=name != "interactive")
    try:
        if mode is None:
            click.echo(f"error: --mode {name}: no plugin provides this mode (available: "
                       f"{', '.join(sorted(m.name for m in modes)) or 'none'})", err=True)
            return 2
        from pi_core.app.preflight import MissingAuthError

        app.harness.ctx.mode = {"interactive": "tui", "text": "print"}.get(name, name)  # pi 1.6's ctx.mode
        try:
            return await mode.run(app)
        except UsageError as exc:
            return _usage_failed(exc)
        except asyncio.CancelledError:
            if stop.received is None:
                raise
            task = asyncio.current_task()
            assert task is not None  # this code runs in one
            task.uncancel()
        except MissingAuthError as exc:  # as pi: said before any request, exit code 1
            click.echo(f"error: {exc}", err=True)
            return 1
    finally:
        stop.remove()
        # session_shutdown stops every command and what it left running; then the
        # session file is released (every entry is already written, line by line)
        await app.harness.close()
    return 128 + stop.received


class _StopOnSignal:
    """SIGTERM and SIGHUP (and SIGINT outside the chat, where Ctrl+C is a key) stop the
    run: abort it, cancel the mode, so that the caller runs ``session_shutdown``, stops
    every child and exits with 128 + the signal's number. (A mode may catch them
    itself, as the RPC mode does, by installing its own handlers.)"""

    def __init__(self, harness, interrupt: bool) -> None:
        import asyncio
        import signal

        self.harness, self.installed = harness, []
        self.received: int | None = None
        self.task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        wanted = [signal.SIGTERM, getattr(signal, "SIGHUP", None)]
        if interrupt:
            wanted.append(signal.SIGINT)
        for signum in filter(None, wanted):
            try:
                loop.add_signal_handler(signum, self._stop, int(signum))
                self.installed.append(signum)
            except (NotImplementedError, RuntimeError, ValueError):
                pass

    def _stop(self, signum: int) -> None:
        if self.received is not None:
            return
        self.received = signum
        self.harness.abort()
        self.harness.abort_bash()
        assert self.task is not None  # made inside a task (the run's)
        self.task.cancel()

    def remove(self) -> None:
        import asyncio

        loop = asyncio.get_running_loop()
        for signum in self.installed:
            loop.remove_signal_handler(signum)


def _export(source: str, output: str | None) -> int:
    """``pi --export FILE [OUT]``: the ``export`` subcommand a plugin provides."""
    from pi_plugins.cli.subcommands import find

    command = find("export")
    if command is None:
        click.echo("error: no plugin provides the HTML export (export)", err=True)
        return 2
    try:
        command.main([source, *([output] if output else [])], prog_name="pi export",
                     standalone_mode=False)
    except SystemExit as exc:
        return int(exc.code or 0)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    return 0


if __name__ == "__main__":
    main()
