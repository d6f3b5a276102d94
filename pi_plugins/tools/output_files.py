"""Output files: what pi writes so the model can reach output it was not shown whole (the
full text of truncated tool output, binary MCP resources, codemode images and text).

As in pi 1.6, each is a new file in the temp folder named ``<prefix>-<16 hex><extension>``,
created exclusively (never through a link someone placed there) and readable only by the
user (0600), since output can carry private data.
"""

from __future__ import annotations

import os
import tempfile
from typing import BinaryIO

MODE = 0o600


def open_output_file(prefix: str, extension: str) -> tuple[str, BinaryIO]:
    """A new output file open for writing, and its path."""
    import secrets  # (with hmac and OpenSSL's hashlib: where a file is written, not on import)

    path = os.path.join(tempfile.gettempdir(), f"{prefix}-{secrets.token_hex(8)}{extension}")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), MODE)
    return path, os.fdopen(fd, "wb")


def write_output_file(prefix: str, extension: str, data: str | bytes) -> str:
    """Write ``data`` (text as UTF-8) to a new output file; its path."""
    path, out = open_output_file(prefix, extension)
    with out:
        out.write(data.encode("utf-8") if isinstance(data, str) else data)
    return path
