"""HTML export of a session: one self-contained page of the whole session tree.

``pi --export FILE [OUT]`` and RPC's ``export_html`` both call :func:`export_html`.

The page is rendered here from the tree, so every entry of every branch is in the HTML
itself, escaped in one place (:func:`escape`, and :func:`escape_text` for bulk text):
it reads in any browser, with scripts off too (then all branches show, one after
another, each under a heading). The inline script only adds navigation: like pi's
export it shows one branch at a time, starting with the session's current one, with a
switch at every fork and a tree of all entries in the sidebar, and it opens or closes
thinking and long tool output. Sidebar and entries are shown once the page has loaded,
and off-screen entries are not laid out, so a 20,000-entry page opens in seconds.

Nothing is fetched: style, script and images (``data:`` URLs) are inline, and the
page's Content-Security-Policy forbids loading anything else.
"""

from __future__ import annotations

import contextvars
import json
import os
import re
from html import escape as _html_escape
from pathlib import Path
from typing import Any

from pi_core.protocol.codec import to_json
from pi_core.protocol.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    Entry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    UnknownEntry,
)
from pi_core.protocol.messages import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UnknownContent,
    UnknownMessage,
    UserMessage,
)
from pi_core.session import Session, SessionError, TreeNode
from pi_plugins.export_assets import page_css, page_js, script_hash

APP_NAME = "pi"
PREVIEW_LINES = 12  # longer tool output and arguments show this many lines, then fold
SUMMARY_CHARS = 90  # one line of the sidebar tree
MAX_INDENT = 12  # deeper forks are drawn at this depth (the page stays readable)
_MARKUP = re.compile(r"[&<>\"']")
_IMAGE_TYPE = re.compile(r"image/[A-Za-z0-9.+-]+")  # what may follow "data:" in an <img>


class ExportError(ValueError):
    """The session cannot be exported as asked; the message says why."""


def escape(value: Any) -> str:
    """Text for HTML content and attribute values: ``& < > " '`` escaped."""
    if not isinstance(value, str):
        value = str(value)
    if _MARKUP.search(value) is None:  # most ids, names and stamps: one scan, no copies
        return value
    return _html_escape(value, quote=True)


def escape_text(text: str) -> str:
    """Text for element content only (never an attribute): there only ``&`` and ``<``
    can start markup. Two passes instead of five, on the bulk of a large page."""
    return text.replace("&", "&amp;").replace("<", "&lt;")


# ---------------------------------------------------------------- public API


def default_output_name(source: str | os.PathLike | Session) -> str:
    """pi's name for the page, in the current directory: ``pi-session-<file name
    without .jsonl>.html`` (a session without a file: its id)."""
    if isinstance(source, Session):
        stem = _stem(source.file) if source.file is not None else source.id
    else:
        stem = _stem(Path(source))
    return f"{APP_NAME}-session-{stem}.html"


#: The tools whose own ``summarize`` heads each call on the page (set per export).
_TOOLS: contextvars.ContextVar[dict | None] = contextvars.ContextVar("export_tools", default=None)


def _tools() -> dict:
    tools = _TOOLS.get()
    if tools is None:  # a file exported on its own: the built-in tools present their calls
        from pi_plugins.tools import builtin_tools

        tools = {t.name: t for t in builtin_tools()}
        _TOOLS.set(tools)
    return tools


def export_html(source: str | os.PathLike | Session, output: str | os.PathLike | None = None,
                tools: list | None = None) -> Path:
    """Write the session ``source`` (a session file, or an open :class:`Session`) as one
    HTML page to ``output`` (default: :func:`default_output_name`) and return that path.

    Raises :class:`ExportError` when the file is missing, unreadable or not a session,
    when ``output`` names the session file itself, or when the page cannot be written.
    Damaged lines of an otherwise readable file are skipped and listed on the page.
    """
    if tools is not None:
        _TOOLS.set({t.name: t for t in tools})
    session = source if isinstance(source, Session) else _open(source)
    try:
        target = Path(output) if output else Path(default_output_name(source))
        if session.file is not None and _same_file(target, session.file):
            raise ExportError(f"{target}: this is the session file itself; "
                              "choose another output file")
        page = _redacted(_Page(session).chunks())
    finally:
        if session is not source:
            session.close()
    _write(target, page)
    return target


def render_page(session: Session) -> str:
    """The whole HTML page of ``session``, as a string."""
    return "".join(_redacted(_Page(session).chunks()))


def _redacted(chunks: list[str]) -> list[str]:
    """The page with the keys pi holds redacted (:mod:`pi_plugins.keys.rules`): tool output
    is redacted before it is stored, but a session recorded before that, or by another
    program, may still hold a key."""
    from pi_plugins.keys.rules import held_keys, redact

    keys = held_keys()
    return [redact(chunk, keys) for chunk in chunks] if keys else chunks


# ---------------------------------------------------------------- files


def _stem(path: Path) -> str:
    name = path.name
    return name[: -len(".jsonl")] if name.endswith(".jsonl") else name


def _open(source: str | os.PathLike) -> Session:
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


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _write(target: Path, page: list[str]) -> None:
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


# ---------------------------------------------------------------- the page


class _Page:
    """Renders one session: the header, the sidebar tree and every entry, walking the
    tree once, iteratively (a 20,000-entry chain must not recurse)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.leaf_id = session.leaf_id
        self.on_leaf_path = {e.id for e in session.path()} if self.leaf_id else set()
        self.entries_html: list[str] = []
        self.tree_html: list[str] = []

    def chunks(self) -> list[str]:
        """The page in pieces, in order (a large page is written without joining it)."""
        roots = self.session.tree()
        self._walk(roots)
        session = self.session
        title = f"{APP_NAME} session: {session.name or session.id}"
        csp = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
               f"script-src {script_hash()}; base-uri 'none'; form-action 'none'")
        entries = self.entries_html or ['<p class="empty">This session has no entries.</p>']
        return [
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
            f'<meta http-equiv="Content-Security-Policy" content="{escape(csp)}">\n',
            f"<title>{escape(title)}</title>\n<style>\n{page_css()}</style>\n",
            # Sidebar and entries stay hidden while a large page loads (laying them out
            # again and again as they arrive takes minutes for 20,000 entries); the
            # script shows them once it has picked the branch, or this does, without it.
            "<noscript><style>#sidebar[hidden], #entries[hidden] { display: block !important; }"
            "</style></noscript>\n</head>\n",
            f'<body data-leaf="{escape(self.leaf_id or "")}">\n',
            '<aside id="sidebar" hidden><h2>Session tree</h2>',
            f'<ol id="tree">{"".join(self.tree_html)}</ol></aside>\n',
            '<main id="content">\n',
            self._header(),
            '<nav id="toolbar" hidden>'
            '<button type="button" data-action="branches" title="Show all branches or only '
            'the selected one (B)">All branches</button>'
            '<button type="button" data-action="thinking" title="Open or close all thinking '
            '(T)">Thinking</button>'
            '<button type="button" data-action="output" title="Open or close all long '
            'output (O)">Full output</button></nav>\n',
            '<div id="entries" hidden>\n', *entries, '</div>\n</main>\n',
            f"<script>{page_js()}</script>\n</body>\n</html>\n",
        ]

    # ------------------------------------------------------------ the tree walk

    def _walk(self, roots: list[TreeNode]) -> None:
        """Emit every entry in depth-first order, children oldest first; before each
        branch of a fork, a heading; after a forking entry, the list of its branches."""
        stack: list[tuple] = []
        self._push_children(stack, "", roots, 0, "")
        while stack:
            item = stack.pop()
            if item[0] == "head":
                _, node, index, count, depth, fork_id = item
                self._branch_head(node, index, count, depth, fork_id)
                continue
            _, node, parent_id, depth, lead, rails = item
            self._entry(node, parent_id, depth, lead)
            self._push_children(stack, node.entry.id, node.children, depth, rails)

    def _push_children(self, stack: list, parent_id: str, children: list[TreeNode], depth: int,
                       rails: str) -> None:
        """Queue ``children`` (the last one is taken first). In the sidebar each line
        starts with the rails of its forks, as an ASCII tree: a branch starts with
        ``├─`` (``└─`` for the last one), and ``│`` runs on while a later branch follows."""
        if len(children) == 1:
            stack.append(("node", children[0], parent_id, depth, rails, rails))
        elif children:
            self._fork(parent_id, children)
            if depth >= MAX_INDENT:  # deeper forks are drawn at the deepest indent
                rails = rails[:-3]
            for index in range(len(children) - 1, -1, -1):
                last = index == len(children) - 1
                stack.append(("node", children[index], parent_id, depth + 1,
                              rails + ("└─ " if last else "├─ "), rails + ("   " if last else "│  ")))
                stack.append(("head", children[index], index, len(children), depth + 1, parent_id))

    def _fork(self, parent_id: str, children: list[TreeNode]) -> None:
        links = []
        for index, child in enumerate(children, 1):
            current = ' <span class="current-mark">(current)</span>' if (
                child.entry.id in self.on_leaf_path) else ""
            links.append(
                f'<li><a href="#b-{escape(child.entry.id)}" data-branch="{escape(child.entry.id)}">'
                f'<span class="branch-no">{index}</span> {self._branch_title(child)}{current}</a></li>'
            )
        where = "here" if parent_id else "at the start"
        self.entries_html.append(
            f'<nav class="fork" data-fork="{escape(parent_id)}"><span class="fork-title">'
            f'The session branches {where} ({len(children)} branches)</span>'
            f'<ol>{"".join(links)}</ol></nav>\n'
        )

    def _branch_head(self, node: TreeNode, index: int, count: int, depth: int, fork_id: str) -> None:
        entry_id = escape(node.entry.id)
        self.entries_html.append(
            f'<h3 class="branch-head" id="b-{entry_id}" data-branch="{entry_id}" '
            f'data-fork="{escape(fork_id)}" style="--d:{min(depth, MAX_INDENT)}">'
            f'Branch {index + 1} of {count}: {self._branch_title(node)}</h3>\n'
        )

    def _branch_title(self, node: TreeNode) -> str:
        """A branch is named by its first label, else its first user message (looking a
        few entries down its first stretch), else its first entry."""
        try:
            return self._find_branch_title(node)
        except Exception:  # an entry with values of unexpected types
            return escape(node.entry.id or "?")

    def _find_branch_title(self, node: TreeNode) -> str:
        label = None
        current: TreeNode | None = node
        for _ in range(8):
            if current is None:
                break
            label = label or current.label
            message = current.entry.message if isinstance(current.entry, MessageEntry) else None
            if isinstance(message, UserMessage):
                text = _summary_text(_text_of(message.content))
                return (f'<span class="label">{escape(label)}</span> ' if label else "") + escape(text)
            current = current.children[0] if len(current.children) == 1 else None
        if label:
            return f'<span class="label">{escape(label)}</span>'
        return escape(_summary(node.entry)[1])

    # ------------------------------------------------------------ one entry

    def _entry(self, node: TreeNode, parent_id: str, depth: int, lead: str) -> None:
        entry = node.entry
        entry_id = escape(entry.id or "")
        try:
            kind, title, body = _render(entry)
            tree_kind, summary = _summary(entry)
        except Exception as exc:  # a value of an unexpected type: show it as stored
            kind, title, body = _unreadable(entry, exc)
            tree_kind, summary = "t-meta", f"entry: {entry.type or '?'} (not readable)"
        label = f'<span class="label">{escape(node.label)}</span>' if node.label else ""
        stamp = _timestamp(entry)
        self.entries_html += (  # the body apart: no copy of a large one
            f'<article class="entry {kind}" id="e-{entry_id}" data-id="{entry_id}" '
            f'data-parent="{escape(parent_id)}" style="--d:{min(depth, MAX_INDENT)}">'
            f'<header class="entry-head"><span class="role">{title}</span>{label}'
            f'<a class="stamp" href="#e-{entry_id}" title="entry {entry_id}">'
            f'<time datetime="{escape(stamp)}">{escape(_short_time(stamp))}</time></a></header>',
            body, "</article>\n",
        )
        leaf = ' <span class="leaf-mark" title="the session\'s current position">●</span>' if (
            entry.id == self.leaf_id) else ""
        rails = f'<span class="rails">{lead}</span>' if lead else ""
        self.tree_html.append(
            f'<li class="{tree_kind}"><a href="#e-{entry_id}" data-id="{entry_id}">{rails}{label}'
            f"{escape(summary)}{leaf}</a></li>"
        )

    # ------------------------------------------------------------ header

    def _header(self) -> str:
        session = self.session
        header = session.header
        stats = _Stats(session.entries)
        rows = [
            ("Session", session.id),
            ("Name", session.name),
            ("Date", f"{_short_time(header.timestamp)} UTC" if header.timestamp else ""),
            ("Working directory", header.cwd),
            ("Parent session", header.parent_session),
            ("Models", ", ".join(stats.models)),
            ("Entries", f"{len(session)} ({stats.leaves} branch{'es' if stats.leaves != 1 else ''})"),
            ("Messages", stats.message_counts()),
            ("Tool calls", str(stats.tool_calls)),
            ("Tokens", stats.token_text()),
            ("Cost", f"${stats.cost:.3f}"),
        ]
        items = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in rows if v)
        problems = ""
        if session.problems:
            listed = "".join(f"<li>{escape(str(p))}</li>" for p in session.problems)
            problems = (f'<details class="problems"><summary>{len(session.problems)} damaged '
                        f"line(s) of the session file were left out</summary><ul>{listed}</ul></details>")
        heading = escape(session.name or f"Session {session.id}")
        return f'<header id="page-head"><h1>{heading}</h1><dl>{items}</dl>{problems}</header>\n'


class _Stats:
    """Totals over every entry of every branch, as pi's export header shows them."""

    def __init__(self, entries: list[Entry]) -> None:
        self.counts: dict[str, int] = {}
        self.tool_calls = 0
        self.tokens = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
        self.cost = 0.0
        self.models: list[str] = []
        seen_models: set[str] = set()
        children: set[str | None] = set()
        for entry in entries:
            try:
                children.add(entry.parent_id)
                model = self._add(entry)
            except Exception:  # values of unexpected types: the entry shows as stored
                continue
            if model and model not in seen_models:
                seen_models.add(model)
                self.models.append(model)
        self.leaves = sum(1 for e in entries if e.id not in children)

    def _add(self, entry: Entry) -> str | None:
        """Count ``entry``; the model it names, if any."""
        if isinstance(entry, ModelChangeEntry):
            return f"{entry.provider}/{entry.model_id}"
        if isinstance(entry, (CompactionEntry, BranchSummaryEntry, CustomMessageEntry)):
            self._count(entry.type)
        elif isinstance(entry, MessageEntry):
            message = entry.message
            self._count(getattr(message, "role", "unknown"))
            if isinstance(message, AssistantMessage):
                self.tool_calls += sum(isinstance(c, ToolCall) for c in message.content)
                usage = message.usage
                for key in self.tokens:
                    self.tokens[key] += _number(getattr(usage, key, 0))
                self.cost += _number(getattr(getattr(usage, "cost", None), "total", 0))
                return f"{message.provider}/{message.model}"
        return None

    def _count(self, kind: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def message_counts(self) -> str:
        names = [("user", "user"), ("assistant", "assistant"), ("toolResult", "tool results"),
                 ("bashExecution", "shell commands"), ("custom", "plugin messages"),
                 ("custom_message", "plugin messages"), ("compaction", "compactions"),
                 ("branch_summary", "branch summaries")]
        totals: dict[str, int] = {}
        for key, name in names:
            if self.counts.get(key):
                totals[name] = totals.get(name, 0) + self.counts[key]
        return ", ".join(f"{n} {name}" for name, n in totals.items())

    def token_text(self) -> str:
        marks = (("input", "↑"), ("output", "↓"), ("cache_read", "R"), ("cache_write", "W"))
        return " ".join(f"{mark}{_tokens(self.tokens[key])}" for key, mark in marks if self.tokens[key])


# ---------------------------------------------------------------- entries to HTML


def _render(entry: Entry) -> tuple[str, str, str]:
    """(css class, escaped title, escaped body) of one entry in the conversation."""
    if isinstance(entry, MessageEntry):
        return _render_message(entry.message)
    if isinstance(entry, CompactionEntry):
        return ("compaction", "Compaction",
                f'<details class="summary"><summary>{_tokens(_number(entry.tokens_before))} tokens '
                f"before this point were summarised</summary>{_text(entry.summary)}</details>")
    if isinstance(entry, BranchSummaryEntry):
        return ("branch-summary", "Branch summary", _text(entry.summary))
    if isinstance(entry, CustomMessageEntry):
        return _render_custom(entry.custom_type, entry.content, entry.display)
    if isinstance(entry, ModelChangeEntry):
        return ("meta", "Model", f'<span class="meta-text">{escape(entry.provider)}/'
                                 f"{escape(entry.model_id)}</span>")
    if isinstance(entry, ThinkingLevelChangeEntry):
        return ("meta", "Thinking level", f'<span class="meta-text">{escape(entry.thinking_level)}</span>')
    if isinstance(entry, LabelEntry):
        what = (f"“{escape(entry.label)}” on" if entry.label else "cleared from")
        return ("meta", "Label", f'<span class="meta-text">{what} '
                                 f'<a href="#e-{escape(entry.target_id)}">{escape(entry.target_id)}</a></span>')
    if isinstance(entry, SessionInfoEntry):
        return ("meta", "Session name", f'<span class="meta-text">{escape(entry.name or "(cleared)")}</span>')
    if isinstance(entry, CustomEntry):
        return ("meta", "Plugin data", f'<span class="meta-text">{escape(entry.custom_type)}</span>'
                                       + _folded_json(entry.data, "data"))
    if isinstance(entry, UnknownEntry):
        return ("meta unknown", "Entry", f'<span class="meta-text">of type {escape(entry.type or "?")}'
                                         "</span>" + _folded_json(entry.data, "as stored"))
    return ("meta unknown", "Entry", "")


def _unreadable(entry: Entry, error: Exception) -> tuple[str, str, str]:
    """An entry holding values of types nobody expects (a hand-edited or damaged file)."""
    try:
        stored: Any = entry.data if isinstance(entry, UnknownEntry) else to_json(entry)
    except Exception:
        stored = repr(entry)
    return ("meta unknown", "Entry", f'<span class="meta-text">of type {escape(entry.type or "?")}, '
            f"not readable here ({escape(type(error).__name__)}: {escape(error)})</span>"
            + _folded_json(stored, "as stored"))


def _render_message(message: Any) -> tuple[str, str, str]:
    if isinstance(message, UserMessage):
        return ("user", "User", _content(message.content))
    if isinstance(message, AssistantMessage):
        return ("assistant", "Assistant", _assistant(message))
    if isinstance(message, ToolResultMessage):
        state = "error" if message.is_error else "ok"
        title = f'Result of <span class="tool-name">{escape(message.tool_name)}</span>'
        if message.is_error:
            title += ' <span class="error-mark">error</span>'
        return (f"tool-result {state}", title, _content(message.content, fold=True))
    if isinstance(message, BashExecutionMessage):
        return ("bash", "Shell", _bash(message))
    if isinstance(message, CustomMessage):
        return _render_custom(message.custom_type, message.content, message.display)
    if isinstance(message, BranchSummaryMessage):
        return ("branch-summary", "Branch summary", _text(message.summary))
    if isinstance(message, CompactionSummaryMessage):
        return ("compaction", "Compaction summary", _text(message.summary))
    if isinstance(message, UnknownMessage):
        return ("meta unknown", "Message", f'<span class="meta-text">with role '
                f"{escape(message.role or '?')}</span>" + _folded_json(message.data, "as stored"))
    return ("meta unknown", "Message", "")


def _render_custom(custom_type: str, content: Any, display: bool) -> tuple[str, str, str]:
    title = f'Plugin message <span class="tool-name">{escape(custom_type)}</span>'
    if display:
        return ("custom", title, _content(content))
    return ("custom hidden-message", title + ' <span class="meta-text">(not displayed in pi)</span>',
            f"<details><summary>content</summary>{_content(content)}</details>")


def _assistant(message: AssistantMessage) -> str:
    parts = []
    meta = [f"{message.provider}/{message.model}"] if message.model else []
    usage = message.usage
    if _number(usage.input) or _number(usage.output):
        meta.append(f"↑{_tokens(_number(usage.input))} ↓{_tokens(_number(usage.output))}")
    if _number(usage.cost.total):
        meta.append(f"${_number(usage.cost.total):.4f}")
    if meta:
        parts.append(f'<div class="message-meta">{escape(" · ".join(meta))}</div>')
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text.strip():
                parts.append(_text(block.text))
        elif isinstance(block, ThinkingContent):
            if block.redacted:
                parts.append('<details class="thinking"><summary>Thinking (redacted by the '
                             "provider)</summary></details>")
            elif block.thinking.strip():
                parts.append(f'<details class="thinking"><summary>Thinking</summary>'
                             f"{_text(block.thinking)}</details>")
        elif isinstance(block, ToolCall):
            parts.append(_tool_call(block))
        elif isinstance(block, ImageContent):
            parts.append(_image(block))
        elif isinstance(block, UnknownContent):
            parts.append(_folded_json(block.data, f"{block.type or 'unknown'} block"))
    if message.stop_reason == "error":
        parts.append(f'<div class="error-text">Error: {escape(message.error_message or "unknown error")}</div>')
    elif message.stop_reason == "aborted":
        parts.append('<div class="error-text">Aborted</div>')
    elif message.stop_reason == "length":
        parts.append('<div class="error-text">Stopped at the output token limit</div>')
    return "".join(parts)


def _tool_call(call: ToolCall) -> str:
    """A call headed by its tool's own one-line summary; its body by what the arguments
    hold (written content, edits, else the arguments), whatever the tool is called."""
    from pi_plugins.tools.presentation import summary_of

    args = call.arguments if isinstance(call.arguments, dict) else {"arguments": call.arguments}
    head = (f'<span class="tool-name">{escape(call.name)}</span> '
            f'<span class="path">{escape(summary_of(call.name, args, _tools()))}</span>')
    if isinstance(args.get("content"), str):
        body = _folded_pre(args["content"], "content")
    elif isinstance(args.get("edits"), list) or "oldText" in args:
        body = _edits(args)
    elif args and call.name not in _tools():  # no tool to summarise it: all the arguments
        body = _folded_pre(json.dumps(args, indent=2, ensure_ascii=False, default=str), "arguments")
    else:
        body = ""
    return (f'<div class="tool-call" data-call="{escape(call.id)}"><div class="tool-head">'
            f"→ {head}</div>{body}</div>")


def _edits(args: dict) -> str:
    edits = args.get("edits")
    if not isinstance(edits, list):
        edits = [args] if "oldText" in args or "newText" in args else []
    out = []
    for edit in edits:
        if not isinstance(edit, dict):
            continue
        out.append(_folded_pre(str(edit.get("oldText", "")), "removed", css="del"))
        out.append(_folded_pre(str(edit.get("newText", "")), "added", css="ins"))
    return f'<div class="edits">{"".join(out)}</div>' if out else ""


def _bash(message: BashExecutionMessage) -> str:
    notes = []
    if message.cancelled:
        notes.append("cancelled")
    elif message.exit_code not in (0, None):
        notes.append(f"exit code {message.exit_code}")
    if message.truncated:
        notes.append("output truncated" + (f"; full output in {message.full_output_path}"
                                           if message.full_output_path else ""))
    if message.exclude_from_context:
        notes.append("not sent to the model")
    note = f'<div class="meta-text">{escape("; ".join(notes))}</div>' if notes else ""
    output = _folded_pre(message.output, "output") if message.output else ""
    return f'<pre class="command">$ {escape(message.command)}</pre>{output}{note}'


def _content(content: Any, fold: bool = False) -> str:
    if isinstance(content, str):
        return _folded_pre(content, "output") if fold else _text(content)
    parts = []
    for block in content or ():
        if isinstance(block, TextContent):
            parts.append(_folded_pre(block.text, "output") if fold else _text(block.text))
        elif isinstance(block, ImageContent):
            parts.append(_image(block))
        elif isinstance(block, UnknownContent):
            parts.append(_folded_json(block.data, f"{block.type or 'unknown'} block"))
    return "".join(parts)


def _image(block: ImageContent) -> str:
    mime = block.mime_type if isinstance(block.mime_type, str) else ""
    if not _IMAGE_TYPE.fullmatch(mime):
        return f'<div class="meta-text">[image of type {escape(mime or "?")}, not shown]</div>'
    return (f'<img class="image" alt="image ({escape(mime)})" '
            f'src="data:{escape(mime)};base64,{escape(block.data)}">')


def _text(text: str) -> str:
    return f'<div class="text">{escape_text(text)}</div>'


def _folded_pre(text: str, what: str, css: str = "") -> str:
    """Text in a ``<pre>``; past :data:`PREVIEW_LINES` lines the rest folds away."""
    cls = f' class="{css}"' if css else ""
    lines = text.split("\n", PREVIEW_LINES)
    if len(lines) <= PREVIEW_LINES:
        return f"<pre{cls}>{escape_text(text)}</pre>"
    head = "\n".join(lines[:PREVIEW_LINES])
    rest = lines[PREVIEW_LINES]
    more = rest.count("\n") + 1
    return (f'<div class="folded"><pre{cls}>{escape_text(head)}</pre><details class="more">'
            f"<summary>{more} more line{'s' if more != 1 else ''} of {escape(what)}</summary>"
            f"<pre{cls}>{escape_text(rest)}</pre></details></div>")


def _folded_json(value: Any, what: str) -> str:
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return f'<details class="json"><summary>{escape(what)}</summary><pre>{escape_text(text)}</pre></details>'


def _inline_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


# ---------------------------------------------------------------- small texts


def _summary(entry: Entry) -> tuple[str, str]:
    """(css class, one line of plain text) naming ``entry`` in the sidebar tree."""
    if isinstance(entry, MessageEntry):
        message = entry.message
        if isinstance(message, UserMessage):
            return "t-user", "user: " + _summary_text(_text_of(message.content))
        if isinstance(message, AssistantMessage):
            text = message.text.strip()
            if text:
                return "t-assistant", "assistant: " + _summary_text(text)
            calls = message.tool_calls
            if calls:
                return "t-assistant", "assistant: → " + _summary_text(
                    ", ".join(_call_summary(c) for c in calls))
            if message.stop_reason in ("error", "aborted"):
                return "t-assistant", f"assistant: ({message.stop_reason})"
            return "t-assistant", "assistant: (thinking only)" if message.content else "assistant: (empty)"
        if isinstance(message, ToolResultMessage):
            state = "error" if message.is_error else "result"
            return "t-tool", f"{message.tool_name} {state}: " + _summary_text(_text_of(message.content))
        if isinstance(message, BashExecutionMessage):
            return "t-tool", "$ " + _summary_text(message.command)
        if isinstance(message, CustomMessage):
            return "t-custom", f"[{message.custom_type}] " + _summary_text(_text_of(message.content))
        if isinstance(message, BranchSummaryMessage):
            return "t-summary", "branch summary: " + _summary_text(message.summary)
        if isinstance(message, CompactionSummaryMessage):
            return "t-summary", "compaction summary: " + _summary_text(message.summary)
        return "t-meta", f"message ({getattr(message, 'role', '?')})"
    if isinstance(entry, BranchSummaryEntry):
        return "t-summary", "branch summary: " + _summary_text(entry.summary)
    if isinstance(entry, CompactionEntry):
        return "t-summary", f"compaction: {_tokens(_number(entry.tokens_before))} tokens summarised"
    if isinstance(entry, CustomMessageEntry):
        return "t-custom", f"[{entry.custom_type}] " + _summary_text(_text_of(entry.content))
    if isinstance(entry, ModelChangeEntry):
        return "t-meta", f"model: {entry.provider}/{entry.model_id}"
    if isinstance(entry, ThinkingLevelChangeEntry):
        return "t-meta", f"thinking: {entry.thinking_level}"
    if isinstance(entry, LabelEntry):
        return "t-meta", f"label: {entry.label or '(cleared)'}"
    if isinstance(entry, SessionInfoEntry):
        return "t-meta", f"name: {entry.name or '(cleared)'}"
    if isinstance(entry, CustomEntry):
        return "t-meta", f"plugin data: {entry.custom_type}"
    return "t-meta", f"entry: {entry.type or '?'}"


def _call_summary(call: ToolCall) -> str:
    args = call.arguments if isinstance(call.arguments, dict) else {}
    for key in ("command", "path", "pattern"):
        if isinstance(args.get(key), str):
            return f"{call.name} {args[key]}"
    return call.name


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    texts = [b.text for b in content or () if isinstance(b, TextContent)]
    if texts:
        return "\n".join(texts)
    return "(image)" if any(isinstance(b, ImageContent) for b in content or ()) else ""


def _summary_text(text: str) -> str:
    """The start of ``text`` on one line, cut at :data:`SUMMARY_CHARS`."""
    head = " ".join(text[: SUMMARY_CHARS * 4].split())
    return head if len(head) <= SUMMARY_CHARS else head[: SUMMARY_CHARS - 1] + "…"


def _timestamp(entry: Entry) -> str:
    stamp = entry.data.get("timestamp") if isinstance(entry, UnknownEntry) else entry.timestamp
    return stamp if isinstance(stamp, str) else ""


def _short_time(stamp: str) -> str:
    """``2026-11-30T04:04:56.423Z`` as ``2026-11-30 04:04:56`` (pi's stamps are UTC)."""
    if len(stamp) >= 19 and stamp[10] == "T":
        return f"{stamp[:10]} {stamp[11:19]}"
    return stamp


def _number(value: Any) -> float:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _tokens(count: float) -> str:
    """Token counts as pi's export writes them: 999, 1.2k, 12k, 1.2M."""
    count = int(count)
    if count < 1000:
        return str(count)
    if count < 10_000:
        return f"{count / 1000:.1f}k"
    if count < 1_000_000:
        return f"{round(count / 1000)}k"
    return f"{count / 1_000_000:.1f}M"
