"""The ``pi`` command line (click). Kept light at import: ``pi --help`` must be quick.

``pi [options] [@files...] [messages...]`` runs the agent; ``pi plugins`` (and the
other subcommands) manage plugins. Anything that is not a subcommand goes to the agent.
"""

from __future__ import annotations

import os
import sys

import click

from pi_core import __version__

MODES_HELP = "text (default: interactive, or print with -p), json, rpc, or acp (for editors)"


class RunCommand(click.Command):
    """The agent command: its usage line reads like pi's."""

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage("pi", "[OPTIONS] [@FILES...] [MESSAGES...]")


class PiGroup(click.Group):
    """Subcommands by name; everything else is ``pi [options] [messages...]``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or args[0] not in self.commands:
            args = ["run", *args]
        return super().parse_args(ctx, args)



@click.group(cls=PiGroup, context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """pi: a minimal, self-extensible coding-agent harness."""


def _print_version(ctx: click.Context) -> None:
    """The bare version, as pi prints it: on stdout when run from a terminal, else on
    stderr (pi keeps stdout for the protocol whenever stdin is not a terminal, and pi-acp
    counts on it: what it reads on stdout it compares with the npm release of pi)."""
    stream = sys.stdout if sys.stdin is not None and sys.stdin.isatty() else sys.stderr
    stream.write(f"{__version__}\n")
    stream.flush()
    ctx.exit(0)


def _flag(*names: str, **kwargs):
    return click.option(*names, is_flag=True, default=False, **kwargs)


@main.command("run", cls=RunCommand, hidden=True, context_settings={"help_option_names": ["-h", "--help"]},
              epilog="Subcommands: pi install|remove|list (plugin packages), pi plugins (loaded plugins); pi <subcommand> --help.")
@click.argument("messages", nargs=-1)
@click.option("--provider", help="Provider name.")
@click.option("--model", help='Model pattern or id ("provider/id", optional ":<thinking>").')
@click.option("--api-key", help="API key (else auth.json, the environment, models.json).")
@click.option("--system-prompt", help="Replace the base system prompt (text or a file).")
@click.option("--append-system-prompt", multiple=True, help="Append text or a file to the system prompt (repeatable).")
@click.option("--mode", type=click.Choice(["text", "json", "rpc", "acp"]), default="text", help=MODES_HELP)
@_flag("-p", "--print", "print_", help="Process the prompt, print the answer and exit.")
@click.option("--events", type=click.Choice(["lean", "full"]), default=None,
              help="message_update lines: lean (the delta only; JSON mode's default) or full "
                   "(pi's message snapshots; RPC mode's default).")
@_flag("-c", "--continue", "continue_session", help="Continue the most recent session.")
@_flag("-r", "--resume", help="Choose a session to resume.")
@click.option("--session", help="Use a session file or a session id prefix.")
@click.option("--fork", help="Fork a session file or id prefix into a new session.")
@click.option("--session-dir", help="Folder for session files.")
@_flag("--no-session", help="Do not save the session.")
@click.option("--models", help="Comma-separated model patterns for cycling.")
@_flag("-nt", "--no-tools", help="Start with no tools enabled.")
@_flag("-nbt", "--no-builtin-tools", help="Start without the built-in tools; plugin tools stay enabled.")
@click.option("-t", "--tools", help="Comma-separated allow-list of tool names.")
@click.option("--thinking", type=click.Choice(["off", "minimal", "low", "medium", "high", "xhigh"]),
              help="Thinking level.")
@click.option("-e", "--extension", "extensions", multiple=True, help="Load a plugin file or package directory (repeatable).")
@_flag("-ne", "--no-extensions", help="Skip plugin discovery (explicit -e still loads).")
@click.option("--skill", "skills", multiple=True, help="Load a skill file or folder (repeatable).")
@_flag("-ns", "--no-skills", help="Do not discover skills.")
@click.option("--prompt-template", "prompt_templates", multiple=True, help="Load a prompt template file or folder (repeatable).")
@_flag("-np", "--no-prompt-templates", help="Do not discover prompt templates.")
@click.option("--theme", "themes", multiple=True, help="Load a theme file or folder (repeatable).")
@_flag("--no-themes", help="Do not discover or load themes.")
@_flag("-nc", "--no-context-files", help="Do not load AGENTS.md / CLAUDE.md.")
@click.option("--export", help="Export a session file to HTML and exit (pi --export FILE [OUT]).")
@click.option("--list-models", is_flag=False, flag_value="", default=None, metavar="[SEARCH]",
              help="List available models (optionally matching SEARCH) and exit.")
@_flag("--verbose", help="Verbose start-up.")
@_flag("--offline", help="No start-up network use (pi-harness never makes any).")
@click.option("-v", "--version", is_flag=True, expose_value=False, is_eager=True,
              callback=lambda ctx, _, value: _print_version(ctx) if value else None,
              help="Print the version and exit.")
def run_command(messages, print_, **flags) -> None:
    """pi: a minimal, self-extensible coding agent. Chats in the terminal, or answers
    once with -p; --mode json and --mode rpc serve programs."""
    from pi_core.app import RunArgs

    import asyncio

    args = RunArgs(messages=list(messages), print=print_, **flags)
    if args.export:
        export_output = args.messages[0] if args.messages else None
        sys.exit(_export(args.export, export_output))
    if args.list_models is not None:
        sys.exit(asyncio.run(_list_models(args)))
    sys.exit(asyncio.run(_run(args)))


async def _run(args) -> int:
    from pi_core.app import UsageError, build_app

    try:
        app = await build_app(args)
    except UsageError as exc:
        click.echo(f"error: {exc}", err=True)
        return 2
    # as in pi: without -p the chat runs, unless stdin is not a terminal (then print mode)
    interactive = not args.print and sys.stdin.isatty()
    name = args.mode if args.mode != "text" else ("interactive" if interactive else "text")
    modes = await app.plugins.collect("register_modes", key="name", ctx=app.harness.ctx)
    mode = next((m for m in modes if m.name == name), None)
    try:
        if mode is None:
            click.echo(f"error: no plugin provides the {name!r} mode (loaded: "
                       f"{', '.join(m.name for m in modes) or 'none'})", err=True)
            return 2
        from pi_core.harness import MissingAuthError

        try:
            return await mode.run(app)
        except UsageError as exc:
            click.echo(f"error: {exc}", err=True)
            return 2
        except MissingAuthError as exc:  # as pi: said before any request, exit code 1
            click.echo(f"error: {exc}", err=True)
            return 1
    finally:
        await app.harness.close()


async def _list_models(args) -> int:
    from pi_core.discovery import load_plugins
    from pi_core.registry import ModelRegistry, model_table

    plugins = load_plugins(cwd=os.getcwd(), extension_paths=args.extensions,
                           discover=not args.no_extensions)
    registry = await ModelRegistry.from_plugins(plugins)
    models = registry.search(args.list_models or "")
    if not models:
        click.echo("No models match." if args.list_models else
                   "No models available: set an API key or add models to models.json.")
        return 0
    click.echo(model_table(models))
    return 0


def _export(source: str, output: str | None) -> int:
    try:
        from pi_plugins.export_html import export_html
    except ImportError:
        click.echo("error: HTML export is not available in this build", err=True)
        return 2
    try:
        written = export_html(source, output)
    except (OSError, ValueError) as exc:
        click.echo(f"error: {exc}", err=True)
        return 1
    click.echo(f"Exported to: {written}")  # pi's wording, which scripts may read
    return 0


@main.command("plugins")
@click.option("-e", "--extension", "extensions", multiple=True, type=click.Path(),
              help="Also load a plugin file or package directory (repeatable).")
@click.option("--no-extensions", is_flag=True,
              help="Skip installed and user/project plugins; built-ins and -e still load.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def plugins_command(extensions: tuple[str, ...], no_extensions: bool, as_json: bool) -> None:
    """List the plugins in load order: where each came from, its distribution and
    version, the hooks it implements; plugins disabled by settings are shown as such."""
    from pi_core.discovery import PluginPolicy, load_plugins
    from pi_core.paths import agent_dir
    from pi_core.settings import Settings

    cwd, home = os.getcwd(), agent_dir()
    settings = Settings.load(cwd, home)
    plugins = load_plugins(cwd=cwd, agent_dir=home, settings=settings,
                           discover=not no_extensions, extension_paths=extensions)
    rows = [
        {
            "name": info.name,
            "source": info.source,
            "location": info.location,
            "distribution": info.distribution,
            "version": info.version,
            "hooks": plugins.hooks_of(info.name),
            "enabled": True,
        }
        for info in plugins.infos
    ]
    rows += [
        {
            "name": skip.name,
            "source": skip.source,
            "location": skip.location,
            "distribution": skip.distribution,
            "version": skip.version,
            "hooks": None,
            "enabled": False,
            "reason": skip.reason,
        }
        for skip in plugins.skipped
    ]
    errors = [str(e) for e in plugins.errors] + [f"warning: {p}" for p in settings.problems]
    if not no_extensions:
        known = [r["name"] for r in rows] + [r["distribution"] for r in rows if r["distribution"]]
        for name in PluginPolicy.from_settings(settings).unmatched(known):
            errors.append(f"warning: settings name a plugin that is not installed: {name}")
    if as_json:
        import json

        click.echo(json.dumps({"plugins": rows, "errors": errors}, indent=2))
        return
    for row in rows:
        origin = row["source"]
        if row["distribution"]:
            origin += f", {row['distribution']} {row['version']}"
        state = "" if row["enabled"] else f"  [{row['reason']}]"
        click.echo(f"{row['name']}  ({origin})  {row['location']}{state}")
        hooks = "(not loaded)" if row["hooks"] is None else ", ".join(row["hooks"]) or "(none)"
        click.echo(f"    hooks: {hooks}")
    for error in errors:
        click.echo(error if error.startswith("warning:") else f"error: {error}", err=True)


_PIP_ARGS = {"ignore_unknown_options": True, "allow_interspersed_args": False,
             "help_option_names": ["-h", "--help"]}
_LOCAL_HELP = "Use the project's .pi/settings.json (plugin files only; packages share the environment)."


@main.command("install", context_settings=_PIP_ARGS)
@click.option("-l", "--local", is_flag=True, help=_LOCAL_HELP)
@click.option("--editable", is_flag=True, help="Install a project folder in editable mode (pip -e).")
@click.argument("source")
@click.argument("pip_args", nargs=-1, type=click.UNPROCESSED)
def install_command(source: str, pip_args: tuple[str, ...], local: bool, editable: bool) -> None:
    """Install a plugin package and report the plugins it adds.

    SOURCE is a PyPI requirement (pi-todo, "pi-todo>=1.2"), a path to a Python project
    or wheel, or a git URL (git+https://..., or pi's git:host/user/repo[@ref]). It is
    installed with pip into the environment pi runs in; options after SOURCE go to pip
    (pi install ./my-plugin --no-build-isolation). Its plugins load on the next run.

    A .py file or a plugin folder without a pyproject.toml is not copied: its path is
    added to "extensions" in settings.json (global, or the project's with -l).
    """
    from pi_core.packages import run_install

    sys.exit(run_install(source, list(pip_args), local=local, cwd=os.getcwd(), editable=editable))


def _remove(source: str, pip_args: tuple[str, ...], local: bool) -> None:
    from pi_core.packages import run_remove

    sys.exit(run_remove(source, list(pip_args), local=local, cwd=os.getcwd()))


@main.command("remove", context_settings=_PIP_ARGS)
@click.option("-l", "--local", is_flag=True, help=_LOCAL_HELP)
@click.argument("source")
@click.argument("pip_args", nargs=-1, type=click.UNPROCESSED)
def remove_command(source: str, pip_args: tuple[str, ...], local: bool) -> None:
    """Uninstall a plugin package (by distribution name, plugin name or project path),
    or take a plugin file out of settings.json."""
    _remove(source, pip_args, local)


@main.command("uninstall", context_settings=_PIP_ARGS, hidden=True)
@click.option("-l", "--local", is_flag=True, help=_LOCAL_HELP)
@click.argument("source")
@click.argument("pip_args", nargs=-1, type=click.UNPROCESSED)
def uninstall_command(source: str, pip_args: tuple[str, ...], local: bool) -> None:
    """Alias for remove."""
    _remove(source, pip_args, local)


@main.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def list_command(as_json: bool) -> None:
    """List the installed packages that provide pi plugins, and plugin files in settings."""
    from pi_core.packages import run_list

    sys.exit(run_list(cwd=os.getcwd(), as_json=as_json))


if __name__ == "__main__":
    main()
