"""The files of an export: the session file read (or refused, with the reason), and the
page written whole or not at all."""

from __future__ import annotations

import os
from pathlib import Path

from pi_core.session import Session, SessionError


class ExportError(ValueError):
    """The session cannot be exported as asked; the message says why."""


def stem(path: Path) -> str:
    name = path.name
    return name[: -len(".jsonl")] if name.endswith(".jsonl") else name


def open_session(source: str | os.PathLike) -> Session:
    """The session file ``source``, opened read-only; :class:`ExportError` says why not."""
    path = Path(source)
    if not path.exists():
        raise ExportError(f"{path}: no such file")
    if path.is_dir():
        raise ExportError(f"{path}: is a directory, not a session file")
    try:
        session = Session.open(path, read_only=True)
    except SessionError as exc:
        raise ExportError(str(exc)) from None
    except OSError as exc:
        raise ExportError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not session.on_disk:
        session.close()
        raise ExportError(f"{path}: the file is empty; there is no session to export")
    return session


def same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def write_page(target: Path, page: list[str]) -> None:
    """Write the page whole or not at all: to a temporary file beside it, then renamed."""
    if target.is_dir():
        raise ExportError(f"{target}: is a directory; give a file name for the page")
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        # A lone surrogate (a live session may hold one) cannot be UTF-8: it becomes '?'.
        with open(temporary, "w", encoding="utf-8", errors="replace") as f:
            f.writelines(page)
        os.replace(temporary, target)
    except OSError as exc:
        try:
            temporary.unlink()
        except OSError:
            pass
        raise ExportError(f"{target}: cannot write the page ({exc.strerror or exc})") from None
