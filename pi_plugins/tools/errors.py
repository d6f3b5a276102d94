"""Errors the model can act on.

A tool that raises becomes an error result carrying the exception's text, and that text
is all the model learns. So every failure says what went wrong in the model's terms (the
path it gave) and what to try next.
"""

from __future__ import annotations

import errno


class ToolError(Exception):
    """A failure the model should read; the message says what to do next."""


def os_error(exc: OSError, path: str, doing: str) -> ToolError:
    """Turn ``exc``, raised while ``doing`` (e.g. "reading") ``path``, into advice. An
    environment that refuses a path for its own reason (a sandbox) puts that reason in
    the error's ``advice``, which is given as is."""
    advice = getattr(exc, "advice", None)
    if advice:
        return ToolError(advice)
    if isinstance(exc, FileNotFoundError):
        return ToolError(
            f"{path} does not exist. Check the path with ls or find "
            "(relative paths start at the working directory)."
        )
    if isinstance(exc, PermissionError):
        return ToolError(
            f"Permission denied {doing} {path}. This process may not touch it; pick another "
            "path, or check its permissions with bash (ls -l)."
        )
    if isinstance(exc, IsADirectoryError):
        return ToolError(f"{path} is a directory, not a file. List it with ls.")
    if isinstance(exc, (NotADirectoryError, FileExistsError)):
        return ToolError(f"A part of {path} is a file, not a directory. Check the path with ls.")
    if exc.errno == errno.ENOSPC:
        return ToolError(f"No space left on the device while {doing} {path}.")
    reason = exc.strerror or str(exc)
    return ToolError(f"Failed {doing} {path}: {reason}.")
