"""What plugins give the interactive UI: slash commands (``register_commands``, which the UI also completes),
key shortcuts and renderers for their own messages.

A command with a ``handler`` runs it when the user types ``/name args``. A command without one only names
text the ``input`` chain understands (a prompt template, a ``/skill:name``): the UI offers it for completion
and sends what the user typed as a prompt, where the input hooks expand it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pi_core.protocol.records import record


@record(frozen=True)
class Command:
    name: str  # without the leading slash: "review", "skill:pdf-tools"
    description: str = ""
    #: ``handler(args, ctx)``, plain or async; ``None``: the text is sent as a prompt.
    handler: Callable[[str, Any], Any] | None = None
    #: Shown before the description when completing, e.g. ``"<file> [focus]"``.
    argument_hint: str | None = None
    #: ``argument_completions(prefix)``: values (or ``{value, label, description}``) to offer.
    argument_completions: Callable[[str], Any] | None = None
    #: Where it comes from: extension, prompt (a template) or skill.
    source: str = "extension"
    #: pi's ``sourceInfo`` (``path``, ``source``, ``scope``, ``origin``, ``baseDir``);
    #: ``None`` for a plugin's command: the RPC mode fills it from the plugin's origin.
    source_info: dict | None = None


@record(frozen=True)
class Shortcut:
    """A key a plugin binds in the interactive mode (``register_shortcuts``)."""

    key: str  # pi's spelling: "ctrl+x", "alt+s", "shift+tab", "f5"
    #: ``handler(ctx)``, plain or async.
    handler: Callable[[Any], Any]
    description: str = ""


@record(frozen=True)
class MessageRenderer:
    """How the interactive mode shows a plugin's ``custom`` messages of one kind
    (``register_message_renderers``)."""

    custom_type: str
    #: ``render(message, expanded)`` returns text (ANSI colours allowed), a rich
    #: renderable, or None for the default look.
    render: Callable[[Any, bool], Any]


@record(frozen=True)
class Flag:
    """A command-line flag a plugin reads (``register_flags``), pi's ``registerFlag``:
    ``pi --name`` (``type="boolean"``) or ``pi --name VALUE`` (``type="string"``); the
    plugin reads it with ``ctx.get_flag(name)`` (``default`` when not given)."""

    name: str  # without the dashes: "plan" for --plan
    description: str = ""
    type: str = "boolean"  # "boolean" or "string"
    default: Any = None

    def __attrs_post_init__(self) -> None:
        if self.type not in ("boolean", "string"):
            raise ValueError(f"flag --{self.name}: type must be 'boolean' or 'string', not {self.type!r}")
        if not self.name or self.name.startswith("-"):
            raise ValueError(f"flag name {self.name!r}: give it without the leading dashes")


def as_flag(item: Any) -> Flag:
    """A ``register_flags`` item: a :class:`Flag` as it is; anything else is refused
    (the plugin manager reports it with the plugin's name and the hook)."""
    if isinstance(item, Flag):
        return item
    raise TypeError(f"register_flags must return Flag objects, not {type(item).__name__} {item!r}")
