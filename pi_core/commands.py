"""Slash commands: what ``register_commands`` returns and the interactive UI completes.

A command with a ``handler`` runs it when the user types ``/name args``. A command
without one only names text the ``input`` chain understands (a prompt template, a
``/skill:name``): the UI offers it for completion and sends what the user typed as a
prompt, where the input hooks expand it.
"""

from __future__ import annotations

from typing import Any, Callable

from attrs import define


@define(frozen=True)
class Command:
    name: str  # without the leading slash: "review", "skill:pdf-tools"
    description: str = ""
    #: ``handler(args, ctx)``, plain or async; ``None``: the text is sent as a prompt.
    handler: Callable[[str, Any], Any] | None = None
    #: Shown before the description when completing, e.g. ``"<file> [focus]"``.
    argument_hint: str | None = None
    #: Where it comes from: extension, prompt (a template) or skill.
    source: str = "extension"
