"""``python -m pi_plugins.cli``: the click command line, as the ``pi`` script runs it
for anything but ``--help`` and ``--version`` alone."""

from pi_plugins.cli.entry import command_line

command_line()()
