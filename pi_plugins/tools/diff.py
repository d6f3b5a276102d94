"""The diffs ``edit`` puts in ``details``: the compact, line-numbered ``diff`` (pi's
format), and ``patch``, a standard unified diff as pi 1.6 adds.

Each shown line is ``+N text`` (added, new line number), ``-N text`` (removed, old line
number) or `` N text`` (context); at most four context lines stand on each side of a
change and longer unchanged runs fold into `` ...``. The unchanged head and tail of the
file are skipped before the line matcher runs, so a small edit of a large file stays fast.
"""

from __future__ import annotations

CONTEXT = 4


def _tokens(text: str) -> list[str]:
    """Lines with their newline; a last line without one stays without one."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _blocks(old: list[str], new: list[str]) -> list[tuple[str, list[str], list[str]]]:
    """(tag, old lines, new lines) runs: "equal", "delete" or "insert", in file order."""
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    blocks: list[tuple[str, list[str], list[str]]] = []

    def add(tag: str, a: list[str], b: list[str]) -> None:
        if not (a or b):
            return
        if blocks and blocks[-1][0] == tag:
            _, pa, pb = blocks.pop()
            a, b = pa + a, pb + b
        blocks.append((tag, a, b))

    add("equal", old[:head], new[:head])
    mid_old, mid_new = old[head : len(old) - tail], new[head : len(new) - tail]
    if mid_old and mid_new:
        from difflib import SequenceMatcher

        matcher = SequenceMatcher(None, mid_old, mid_new, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                add("equal", mid_old[i1:i2], mid_new[j1:j2])
            else:
                add("delete", mid_old[i1:i2], [])
                add("insert", [], mid_new[j1:j2])
    else:
        add("delete", mid_old, [])
        add("insert", [], mid_new)
    add("equal", old[len(old) - tail :], new[len(new) - tail :])
    return blocks


def generate_diff(old_text: str, new_text: str, context: int = CONTEXT) -> tuple[str, int | None]:
    """(diff text, first changed line in the new file, None when nothing changed)."""
    blocks = _blocks(_tokens(old_text), _tokens(new_text))
    width = len(str(max(old_text.count("\n"), new_text.count("\n")) + 1))
    gap = f" {'':>{width}} ..."
    out: list[str] = []
    old_no = new_no = 1
    first: int | None = None

    def show(lines: list[str]) -> None:
        nonlocal old_no, new_no
        for line in lines:
            out.append(f" {old_no:>{width}} {line.removesuffix(chr(10))}")
            old_no += 1
            new_no += 1

    def skip(count: int) -> None:
        nonlocal old_no, new_no
        if count > 0:
            out.append(gap)
            old_no += count
            new_no += count

    for i, (tag, a, b) in enumerate(blocks):
        if tag == "delete":
            first = first or new_no
            for line in a:
                out.append(f"-{old_no:>{width}} {line.removesuffix(chr(10))}")
                old_no += 1
        elif tag == "insert":
            first = first or new_no
            for line in b:
                out.append(f"+{new_no:>{width}} {line.removesuffix(chr(10))}")
                new_no += 1
        else:
            after_change, before_change = i > 0, i < len(blocks) - 1
            if after_change and before_change:
                if len(a) <= 2 * context:
                    show(a)
                else:
                    show(a[:context])
                    skip(len(a) - 2 * context)
                    show(a[-context:])
            elif after_change:
                show(a[:context])
                skip(len(a) - context)
            elif before_change:
                skip(len(a) - context)
                show(a[max(0, len(a) - context) :])
            else:
                old_no += len(a)
                new_no += len(a)
    return "\n".join(out), first


def generate_patch(path: str, old_text: str, new_text: str, context: int = CONTEXT) -> str:
    """A standard unified diff of the change (``--- path``/``+++ path``, ``@@`` hunks), the
    ``patch`` pi 1.6's edit returns beside its compact diff, for tools that apply patches."""
    from difflib import unified_diff

    out: list[str] = []
    for line in unified_diff(_tokens(old_text), _tokens(new_text), path, path, n=context):
        if line.startswith(("---", "+++")):
            line = line.rstrip() + "\n"  # no dates after the names
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
