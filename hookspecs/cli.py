"""Hooks of the command line and its user interface."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hookspecs.markers import collect, hookspec

if TYPE_CHECKING:
    from pi_core.protocol.commands import Command, Flag, MessageRenderer, Shortcut
    from pi_core.protocol.ctx import Ctx
    from pi_core.protocol.shell import CliCommand, Mode


@hookspec
@collect
def register_commands(ctx: Ctx) -> Command | list[Command] | None:
    """Kind: collect (a plain list). Return slash commands (``name``, ``description``,
    ``handler``). Plugin commands of the same name all stay reachable, numbered in load
    order (``/review:1``, ``/review:2``), as in pi; a skill or template command whose
    name a plugin command has gives way to it."""


@hookspec
@collect
def configuration_problems(ctx: Ctx) -> str | list[str] | None:
    """Kind: collect (a plain list). Once the flags are read (``ctx.get_flag``) and before
    anything runs: what is wrong with the plugin's configuration, one line each (``--max-cost:
    not a number: 'lots'``). Any line stops the start with a usage error (exit status 2)."""


@hookspec
@collect(key="name", result="pi_core.protocol.commands:as_flag")
def register_flags(ctx: Ctx) -> Flag | list[Flag] | None:
    """Kind: collect (by flag name). Return extra command-line flags the plugin reads
    (:class:`pi_core.protocol.commands.Flag`); anything else is reported and ignored."""


@hookspec
@collect(key="custom_type")
def register_message_renderers(ctx: Ctx) -> MessageRenderer | list[MessageRenderer] | None:
    """Kind: collect (by ``custom_type``). Return :class:`pi_core.protocol.commands.MessageRenderer`
    objects: how the interactive mode shows ``custom`` messages of that kind."""


@hookspec
@collect
def register_markdown_transformers(ctx: Ctx) -> Any:
    """Kind: collect (a plain list, in load order). pi 1.6's ``registerMarkdownTransformer``:
    return ``MarkdownTransformer`` objects (from pi_core; only the interactive chat uses these
    three hooks, so their records live in the shell); the chat runs them, each on what the
    one before returned, on the Markdown of the surfaces each names."""


@hookspec
@collect(key="custom_type")
def register_entry_renderers(ctx: Ctx) -> Any:
    """Kind: collect (by ``custom_type``). pi 1.6's ``registerEntryRenderer``: return
    ``EntryRenderer`` objects (from pi_core); the interactive chat shows the plugin's custom
    entries of that kind with them (entries never reach the model)."""


@hookspec
@collect
def register_tool_renderers(ctx: Ctx) -> Any:
    """Kind: collect (a plain list, in load order). pi 1.6's ``registerToolRenderer``: return
    ``ToolRenderer`` objects (from pi_core) choosing how calls to any tool are drawn, also a
    tool not registered (yet)."""


@hookspec
@collect(key="key")
def register_shortcuts(ctx: Ctx) -> Shortcut | list[Shortcut] | None:
    """Kind: collect (by ``key``). Return :class:`pi_core.protocol.commands.Shortcut` objects: keys
    the interactive mode binds to the plugin's handler (``handler(ctx)``); a later
    plugin's shortcut for the same key replaces an earlier one."""


@hookspec
@collect(key="name")
def register_modes(ctx: Ctx) -> Mode | list[Mode] | None:
    """Kind: collect (by mode name).

    Return :class:`pi_core.protocol.shell.Mode` objects (``name``, async ``run(app)`` returning the
    exit code). ``pi`` runs the mode named by ``--mode`` (``text`` with ``-p`` is
    ``text``, without it ``interactive``); a later plugin's mode replaces an earlier one.
    """


@hookspec
@collect(key="name")
def register_cli_commands(ctx: None) -> CliCommand | list[CliCommand] | None:
    """Kind: collect (by ``name``).

    When ``pi`` meets a subcommand it does not know by itself (and for ``pi --help``'s
    list), like llm's ``register_commands(cli)``. Return
    :class:`pi_core.protocol.shell.CliCommand` objects naming a click command by
    ``"module:attribute"``, imported only when that subcommand runs, so ``pi --help``
    stays quick. ``ctx`` is ``None``: no harness runs yet.
    """


@hookspec
@collect
def project_trust(event: Any, ctx: Ctx) -> dict | None:
    """Kind: collect (the first answer that decides wins). Before the project's own
    resources load (``.pi/extensions``, skills, settings…), when the folder has some and
    ``-a/--approve`` or ``-na/--no-approve`` did not decide: may this project be trusted?
    Only plugins loaded before it can answer (built-ins, installed packages, the agent
    dir's extensions, ``-e``). ``event.cwd`` is the folder; ``ctx.ui`` can ask where
    ``ctx.ui.has_ui``. Return pi's ``{"trusted": "yes" | "no" | "undecided",
    "remember": bool}``: the first ``yes`` or ``no`` decides, ``remember`` saves it in
    ``trust.json``; ``undecided`` or ``None`` leaves it to the saved decision and the
    ``defaultProjectTrust`` setting."""
