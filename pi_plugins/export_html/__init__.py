"""HTML export of a session: one self-contained page of the whole session tree.

``pi --export FILE [OUT]`` and RPC's ``export_html`` both call :func:`export_html`.

The page is rendered here from the tree, so every entry of every branch is in the HTML
itself, escaped in one place (:mod:`.markup`'s :func:`escape`, and :func:`escape_text`
for bulk text): it reads in any browser, with scripts off too (then all branches show, one after
another, each under a heading). The inline script only adds navigation: like pi's
export it shows one branch at a time, starting with the session's current one, with a
switch at every fork and a tree of all entries in the sidebar, and it opens or closes
thinking and long tool output. Sidebar and entries are shown once the page has loaded,
and off-screen entries are not laid out, so a 20,000-entry page opens in seconds.

Nothing is fetched: style, script and images (``data:`` URLs) are inline, and the
page's Content-Security-Policy forbids loading anything else.

The package: :mod:`.files` reads the session and writes the page, :mod:`.page` walks the
tree into the page, :mod:`.entries` renders one entry, :mod:`.markup` escapes and builds
the HTML pieces, :mod:`.texts` writes the sidebar's one-line summaries and the numbers.
"""

from __future__ import annotations

import os
from pathlib import Path

from pi_core.session import Session
from pi_plugins.export_html.entries import use_tools
from pi_plugins.export_html.files import ExportError, open_session, same_file, stem, write_page
from pi_plugins.export_html.markup import escape, escape_text
from pi_plugins.export_html.page import APP_NAME, Page

__all__ = ["ExportError", "default_output_name", "escape", "escape_text", "export_html", "render_page"]


def default_output_name(source: str | os.PathLike | Session) -> str:
    """pi's name for the page, in the current directory: ``pi-session-<file name
    without .jsonl>.html`` (a session without a file: its id)."""
    if isinstance(source, Session):
        name = stem(source.file) if source.file is not None else source.id
    else:
        name = stem(Path(source))
    return f"{APP_NAME}-session-{name}.html"


def export_html(source: str | os.PathLike | Session, output: str | os.PathLike | None = None,
                tools: list | None = None) -> Path:
    """Write the session ``source`` (a session file, or an open :class:`Session`) as one
    HTML page to ``output`` (default: :func:`default_output_name`) and return that path.

    Raises :class:`ExportError` when the file is missing, unreadable or not a session,
    when ``output`` names the session file itself, or when the page cannot be written.
    Damaged lines of an otherwise readable file are skipped and listed on the page.
    """
    if tools is not None:
        use_tools(tools)
    session = source if isinstance(source, Session) else open_session(source)
    try:
        target = Path(output) if output else Path(default_output_name(source))
        if session.file is not None and same_file(target, session.file):
            raise ExportError(f"{target}: this is the session file itself; "
                              "choose another output file")
        page = _redacted(Page(session).chunks())
    finally:
        if session is not source:
            session.close()
    write_page(target, page)
    return target


def render_page(session: Session) -> str:
    """The whole HTML page of ``session``, as a string."""
    return "".join(_redacted(Page(session).chunks()))


def _redacted(chunks: list[str]) -> list[str]:
    """The page with the keys pi holds redacted (:mod:`pi_plugins.keys.rules`): tool output
    is redacted before it is stored, but a session recorded before that, or by another
    program, may still hold a key."""
    from pi_plugins.keys.rules import held_keys, redact

    keys = held_keys()
    return [redact(chunk, keys) for chunk in chunks] if keys else chunks
