"""The style sheet and script of an exported session page, inlined into every page.

They live beside this module as ordinary ``.css`` and ``.js`` files (package data), so
they can be read and edited as what they are. The page's Content-Security-Policy lets
only this script run, named by its SHA-256 hash: should escaping ever fail, a script
smuggled in through a session's text still would not execute.
"""

from __future__ import annotations

import base64
import hashlib
from functools import cache
from importlib.resources import files


@cache
def page_css() -> str:
    css = files(__name__).joinpath("page.css").read_text(encoding="utf-8")
    if "</style" in css.lower():  # would end the inline <style> element early
        raise RuntimeError("page.css must not contain '</style'")
    return css


#: The vendored libraries (``vendor/README.md``): Markdown, and highlighting its code.
VENDORED = ("vendor/marked.umd.js", "vendor/highlight.min.js")


@cache
def page_js() -> str:
    """The page's one script: the vendored libraries, then ours (``page.js``)."""
    js = files(__name__).joinpath("page.js").read_text(encoding="utf-8")
    if "</script" in js.lower() or "<!--" in js:  # would end or confuse the inline <script>
        raise RuntimeError("page.js must not contain '</script' or '<!--'")
    libraries = [_inline_safe(files(__name__).joinpath(name).read_text(encoding="utf-8"), name)
                 for name in VENDORED]
    return "\n;\n".join([*libraries, js])


def _inline_safe(js: str, name: str) -> str:
    """A library as it may stand inside ``<script>``: each ``<!--`` (the libraries have
    them only in regular expressions, where ``\\x3C`` matches the same ``<``) rewritten so
    the HTML parser never takes it for a comment; a ``</script`` anywhere is refused."""
    if "</script" in js.lower():
        raise RuntimeError(f"{name} contains '</script'")
    at = js.find("<!--")
    while at != -1:
        if js[at - 1] != "/":  # only a regular expression's start is expected here
            raise RuntimeError(f"{name}: '<!--' outside a regular expression at {at}")
        at = js.find("<!--", at + 1)
    return js.replace("/<!--", r"/\x3C!--")


@cache
def script_hash() -> str:
    """The CSP source that allows exactly :func:`page_js` (``'sha256-…'``)."""
    digest = hashlib.sha256(page_js().encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"
