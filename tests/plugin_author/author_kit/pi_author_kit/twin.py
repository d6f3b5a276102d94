"""A second plugin of the package: it names a command the first one names too."""

from pi_core import hookimpl
from pi_core.protocol.commands import Command

from pi_author_kit import log


async def dup_two(args, ctx):
    log("dup", which=2)


@hookimpl
def register_tools():
    from pi_core import Tool

    # replaces the built-in ls: `pi plugins` says which plugin won
    return [Tool(name="ls", description="The twin's listing.", default_active=False,
                 function=lambda args, run: "nothing to list")]


@hookimpl
def register_commands():
    return [Command("dup", "The twin's", dup_two)]
