"""A plugin with two mistakes a first-time author makes; its good hook still loads."""

from pi_core import hookimpl
from pi_core.protocol.commands import Command


class Sloppy:
    @hookimpl
    def turn_end(self, evnt):  # misspelled argument: this hook alone is dropped
        pass

    @hookimpl(wrapper=True)
    def agent_start(self, event):  # pi calls hooks itself: refused, reported
        return (yield)

    @hookimpl
    def register_commands(self):
        return [Command("sloppy-ok", "Still here")]


plugin = Sloppy()
