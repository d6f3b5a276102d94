"""The page of one session: its head (the session's facts and totals), the sidebar tree
and every entry of every branch, in one walk over the tree."""

from __future__ import annotations

from pi_core.protocol.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    Entry,
    MessageEntry,
    ModelChangeEntry,
)
from pi_core.protocol.messages import AssistantMessage, ToolCall, UserMessage
from pi_core.session import Session, TreeNode
from pi_plugins.export_assets import page_css, page_js, script_hash
from pi_plugins.export_html import texts
from pi_plugins.export_html.entries import render_entry, render_unreadable
from pi_plugins.export_html.markup import escape

APP_NAME = "pi"
MAX_INDENT = 12  # deeper forks are drawn at this depth (the page stays readable); page.js has it too
#: pi's tree filters: (mode, button, what it shows).
FILTERS = [("default", "Default", "Hide settings entries"), ("no-tools", "No-tools", "Default minus tool results"),
           ("user-only", "User", "Only user messages"), ("labeled-only", "Labeled", "Only labeled entries"),
           ("all", "All", "Show everything")]
_SETTINGS_ENTRIES = ("label", "custom", "context_edit", "model_change", "thinking_level_change")


def filter_kind(entry: Entry) -> str:
    """What pi's tree filters go by: ``user``, ``tool-result``, ``settings`` (labels,
    plugin data, model and thinking changes), ``calls-only`` (an answer of tool calls
    alone, which pi's tree leaves out in every mode), else ``other``."""
    try:
        if entry.type in _SETTINGS_ENTRIES:
            return "settings"
        message = entry.message if isinstance(entry, MessageEntry) else None
        if isinstance(message, UserMessage):
            return "user"
        if getattr(message, "role", None) == "toolResult":
            return "tool-result"
        if isinstance(message, AssistantMessage) and not message.text.strip() and (
                message.stop_reason in ("stop", "toolUse", None)):
            return "calls-only"
    except Exception:  # values of unexpected types: shown as stored, filtered as "other"
        pass
    return "other"


class Page:
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
            # pi's tree search and filters; the script makes them work (hidden without it)
            '<div id="tree-tools" hidden><input type="search" id="tree-search" placeholder="Search..." '
            'aria-label="Search the entries"><div id="tree-filters">',
            *(f'<button type="button" data-filter="{mode}" title="{escape(hint)}">{name}</button>'
              for mode, name, hint in FILTERS),
            '</div><div id="tree-status"></div></div>',
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
                text = texts.summary_text(texts.text_of(message.content))
                return (f'<span class="label">{escape(label)}</span> ' if label else "") + escape(text)
            current = current.children[0] if len(current.children) == 1 else None
        if label:
            return f'<span class="label">{escape(label)}</span>'
        return escape(texts.summary(node.entry)[1])

    # ------------------------------------------------------------ one entry

    def _entry(self, node: TreeNode, parent_id: str, depth: int, lead: str) -> None:
        entry = node.entry
        entry_id = escape(entry.id or "")
        try:
            kind, title, body = render_entry(entry)
            tree_kind, summary = texts.summary(entry)
        except Exception as exc:  # a value of an unexpected type: show it as stored
            kind, title, body = render_unreadable(entry, exc)
            tree_kind, summary = "t-meta", f"entry: {entry.type or '?'} (not readable)"
        label = f'<span class="label">{escape(node.label)}</span>' if node.label else ""
        stamp = texts.timestamp(entry)
        self.entries_html += (  # the body apart: no copy of a large one
            f'<article class="entry {kind}" id="e-{entry_id}" data-id="{entry_id}" '
            f'data-parent="{escape(parent_id)}" style="--d:{min(depth, MAX_INDENT)}">'
            f'<header class="entry-head"><span class="role">{title}</span>{label}'
            f'<a class="stamp" href="#e-{entry_id}" title="entry {entry_id}">'
            f'<time datetime="{escape(stamp)}">{escape(texts.short_time(stamp))}</time></a></header>',
            body, "</article>\n",
        )
        leaf = ' <span class="leaf-mark" title="the session\'s current position">●</span>' if (
            entry.id == self.leaf_id) else ""
        rails = f'<span class="rails">{lead}</span>' if lead else ""
        labeled = ' data-labeled=""' if node.label else ""
        self.tree_html.append(
            f'<li class="{tree_kind}" data-filter="{filter_kind(entry)}"{labeled}>'
            f'<a href="#e-{entry_id}" data-id="{entry_id}">{rails}{label}{escape(summary)}{leaf}</a></li>'
        )

    # ------------------------------------------------------------ header

    def _header(self) -> str:
        session = self.session
        header = session.header
        stats = Stats(session.entries)
        rows = [
            ("Session", session.id),
            ("Name", session.name),
            ("Date", f"{texts.short_time(header.timestamp)} UTC" if header.timestamp else ""),
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


class Stats:
    """Totals over every entry of every branch, as pi's export header shows them."""

    def __init__(self, entries: list[Entry]) -> None:
        self.counts: dict[str, int] = {}
        self.tool_calls = 0
        self.tokens: dict[str, float] = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
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
                    self.tokens[key] += texts.number(getattr(usage, key, 0))
                self.cost += texts.number(getattr(getattr(usage, "cost", None), "total", 0))
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
        return " ".join(f"{mark}{texts.tokens(self.tokens[key])}" for key, mark in marks if self.tokens[key])
