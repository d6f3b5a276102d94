"""Hooks of the command line and its user interface."""

from hookspecs.markers import hookspec


@hookspec
def register_commands(ctx):
    """Kind: collect (by command name). Return slash commands (``name``,
    ``description``, ``handler``); a later one replaces an earlier one of the same name."""


@hookspec
def register_flags(ctx):
    """Kind: collect (by flag name). Return extra command-line flags the plugin reads."""


@hookspec
def register_message_renderers(ctx):
    """Kind: collect (by ``custom_type``). Return :class:`pi_core.commands.MessageRenderer`
    objects: how the interactive mode shows ``custom`` messages of that kind."""


@hookspec
def register_shortcuts(ctx):
    """Kind: collect (by ``key``). Return :class:`pi_core.commands.Shortcut` objects: keys
    the interactive mode binds to the plugin's handler (``handler(ctx)``); a later
    plugin's shortcut for the same key replaces an earlier one."""


@hookspec
def register_modes(ctx):
    """Kind: collect (by mode name).

    Return :class:`pi_core.app.Mode` objects (``name``, async ``run(app)`` returning the
    exit code). ``pi`` runs the mode named by ``--mode`` (``text`` with ``-p`` is
    ``text``, without it ``interactive``); a later plugin's mode replaces an earlier one.
    """
