"""What a mode receives (:class:`App`): modes (print, json, rpc, interactive) are plugins
that register a :class:`pi_core.protocol.shell.Mode` through ``register_modes``; the first
prompt they send is made of piped stdin, ``@file`` arguments and the first message."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from pi_core.protocol.records import field, record
from pi_plugins.cli.run_args import RunArgs, UsageError


@record
class Prompt:
    text: str | None
    images: list = field(factory=list)


class App:
    """Everything a mode needs: the harness, the model registry, the flags, the output."""

    def __init__(self, args: RunArgs, harness: Any, registry: Any, plugins: Any,
                 stdout=None, stderr=None, stdin=None, notices: list[str] | None = None) -> None:
        self.args = args
        #: What the start had to say, kept for the chat to show (the other modes printed it).
        self.notices = notices or []
        self.harness = harness
        self.registry = registry
        self._plugins = plugins
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        self.stdin = stdin or sys.stdin

    @property
    def plugins(self) -> Any:
        """The harness's plugins (a ``/reload`` replaces them)."""
        return getattr(self.harness, "plugins", None) or self._plugins

    def initial_prompt(self, read_stdin: bool = True) -> Prompt:
        """Piped stdin, then the ``@file`` contents, then the first message, joined into
        one prompt (pi's order); the other messages follow one by one."""
        parts, images = [], []
        if read_stdin and not self.stdin.isatty():
            piped = self.stdin.read()
            if piped.strip():
                parts.append(piped)
        files = [m[1:] for m in self.args.messages if m.startswith("@") and len(m) > 1]
        for name in files:
            text, image = read_file_argument(name, self.harness.ctx.cwd)
            parts.append(text)
            if image is not None:
                images.append(image)
        rest = self.rest_messages()
        if rest:
            parts.append(rest[0])
        return Prompt("".join(parts) if parts else None, images)

    def rest_messages(self) -> list[str]:
        return [m for m in self.args.messages if not (m.startswith("@") and len(m) > 1)]

    def write(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()


def read_file_argument(name: str, cwd: str):
    """An ``@file`` argument as prompt text (and image content for pictures)."""
    from pi_core.protocol.messages import ImageContent

    path = Path(os.path.expanduser(name))
    path = path if path.is_absolute() else Path(cwd) / path
    if not path.is_file():
        raise UsageError(f"@{name}: no such file ({path})")
    import base64
    import mimetypes

    mime = mimetypes.guess_type(path.name)[0] or ""
    if mime.startswith("image/"):
        data = base64.b64encode(path.read_bytes()).decode()
        return f'<file name="{path}"></file>\n', ImageContent(data=data, mime_type=mime)
    content = path.read_text(encoding="utf-8", errors="replace")
    return f'<file name="{path}">\n{content}\n</file>\n', None
