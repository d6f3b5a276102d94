"""``edit``: exact text replacements in one file, ``{path, edits: [{oldText, newText}]}``.

Every ``oldText`` is looked up in the original file (not in the result of the edits
before it), must occur exactly once and must not overlap another edit's text; then all
replacements are applied together. Line endings (LF or CRLF) and a byte-order mark are
kept as the file had them.

When an ``oldText`` is not in the file as written, a tolerant match is tried: trailing
whitespace on each line, typographic quotes and dashes, special spaces and compatibility
forms (NFKC) are ignored on both sides. The match is mapped back onto the original text,
so only the matched region changes; the rest of the file stays byte for byte.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from pi_core.protocol.records import record
from pi_core.protocol.tools import Tool, ToolResult, ToolRun
from pi_plugins.tools.errors import ToolError, os_error
from pi_plugins.tools.locks import file_lock
from pi_plugins.tools.lookup import environment_for

DESCRIPTION = (
    "Edit one file by exact text replacement. Each edits[].oldText must match exactly one "
    "place in the original file, and no two edits may overlap: when two changes touch the "
    "same or neighbouring lines, make them one edit. Keep oldText short but unique; do not "
    "copy large unchanged regions to join distant changes."
)

PARAMETERS = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "The file to edit, relative to the working directory or absolute"},
        "edits": {
            "type": "array",
            "minItems": 1,
            "description": (
                "One or more replacements, each matched against the original file (not after "
                "the edits before it). No overlapping or nested edits; merge nearby changes."
            ),
            "items": {
                "type": "object",
                "properties": {
                    "oldText": {
                        "type": "string",
                        "description": "The exact text to replace; it must occur once in the file and not overlap another edit's oldText",
                    },
                    "newText": {"type": "string", "description": "The text to put in its place"},
                },
                "required": ["oldText", "newText"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["path", "edits"],
    "additionalProperties": False,
}

_QUOTES_DASHES_SPACES = {
    **{ord(c): "'" for c in "\u2018\u2019\u201a\u201b"},
    **{ord(c): '"' for c in "\u201c\u201d\u201e\u201f"},
    **{ord(c): "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"},
    **{ord(c): " " for c in "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"},
}


def fold(text: str) -> tuple[str, list[int]]:
    """``text`` with the differences the tolerant match ignores taken out, and for each
    character of the result the index of the character of ``text`` it came from (plus a
    last entry, ``len(text)``)."""
    import unicodedata

    out: list[str] = []
    origin: list[int] = []
    offset = 0
    lines = text.split("\n")
    for n, line in enumerate(lines):
        kept = line.rstrip()
        if kept.isascii():
            out.append(kept)
            origin.extend(range(offset, offset + len(kept)))
        else:
            for i, ch in enumerate(kept):
                folded = unicodedata.normalize("NFKC", ch).translate(_QUOTES_DASHES_SPACES)
                out.append(folded)
                origin.extend([offset + i] * len(folded))
        offset += len(line)
        if n < len(lines) - 1:
            out.append("\n")
            origin.append(offset)
            offset += 1
    origin.append(len(text))
    return "".join(out), origin


def _positions(haystack: str, needle: str, most: int = 1000) -> list[int]:
    """Where ``needle`` starts in ``haystack``, overlapping occurrences included."""
    found: list[int] = []
    at = haystack.find(needle)
    while at != -1 and len(found) < most:
        found.append(at)
        at = haystack.find(needle, at + 1)
    return found


@record
class _Match:
    index: int  # which edit
    start: int
    end: int
    new_text: str
    tolerant: bool


def _which(index: int, count: int, single: str, many: str) -> str:
    return single if count == 1 else many.format(i=index)


def plan_edits(content: str, edits: list[dict], path: str) -> list[_Match]:
    """Locate every edit in ``content`` (LF line endings); raises :class:`ToolError`
    with advice when one is empty, missing, ambiguous or overlaps another."""
    count = len(edits)
    folded: tuple[str, list[int]] | None = None
    matches = []
    for i, edit in enumerate(edits):
        old, new = edit["oldText"], edit["newText"]
        if not old:
            raise ToolError(
                _which(i, count, "oldText is empty", "edits[{i}].oldText is empty")
                + f" for {path}. Give the exact text to replace; to insert, include a neighbouring line in both oldText and newText."
            )
        at = _positions(content, old, 2)
        tolerant = False
        if at:
            hits, length = _positions(content, old) if len(at) > 1 else at, len(old)
        else:
            if folded is None:
                folded = fold(content)
            text, origin = folded
            needle = fold(old)[0]
            hits = _positions(text, needle) if needle else []
            if not hits:
                raise ToolError(
                    _which(i, count, "The text to replace was not found", "edits[{i}].oldText was not found")
                    + f" in {path}. oldText must match the file exactly, including whitespace, "
                    "indentation and line breaks. Read the file again and copy the text from it."
                )
            tolerant, length = True, len(needle)
        if len(hits) > 1:
            many = f"{len(hits)}" if len(hits) < 1000 else "1000 or more"
            raise ToolError(
                _which(i, count, "The text to replace occurs", "edits[{i}].oldText occurs")
                + f" {many} times in {path}; it must occur exactly once. Add neighbouring lines "
                "to oldText so that it matches only the place you mean."
            )
        if tolerant:
            assert folded is not None  # tolerant matching folded the text
            text, origin = folded
            start, end = origin[hits[0]], origin[hits[0] + length - 1] + 1
        else:
            start, end = hits[0], hits[0] + length
        matches.append(_Match(i, start, end, new, tolerant))
    ordered = sorted(matches, key=lambda m: m.start)
    for before, after in itertools.pairwise(ordered):
        if before.end > after.start:
            raise ToolError(
                f"edits[{before.index}] and edits[{after.index}] overlap in {path}. Each edit is "
                "matched against the original file: merge the two into one edit, or make them "
                "target separate text."
            )
    return ordered


def apply_edits(content: str, matches: list[_Match]) -> str:
    pieces, at = [], 0
    for m in matches:
        pieces.append(content[at : m.start])
        pieces.append(m.new_text)
        at = m.end
    pieces.append(content[at:])
    return "".join(pieces)


def _to_lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _line_ending(text: str) -> str:
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


async def execute(args: dict, run: ToolRun) -> ToolResult:
    if run.signal.aborted:
        raise ToolError("Operation aborted")
    path, edits = args["path"], args["edits"]
    env = await environment_for(run)
    full = env.resolve(path)
    async with file_lock(full):
        try:
            info = await env.stat(full)
            if info.kind == "directory":
                raise IsADirectoryError(full)
            if info.kind != "file":
                raise ToolError(f"{path} is not a regular file (a device, socket or pipe); edit changes files.")
            raw = await env.read_bytes(full)
        except OSError as exc:
            raise os_error(exc, path, "reading") from None
        try:
            if b"\0" in raw[:8000]:
                raise UnicodeError
            decoded = raw.decode("utf-8")
        except UnicodeError:
            raise ToolError(
                f"{path} is not a UTF-8 text file, so edit cannot change it. Use bash for binary files."
            ) from None
        bom = "\ufeff" if decoded.startswith("\ufeff") else ""
        text = decoded[len(bom):]
        ending = _line_ending(text)
        content = _to_lf(text)
        wanted = [{"oldText": _to_lf(e["oldText"]), "newText": _to_lf(e["newText"])} for e in edits]
        matches = plan_edits(content, wanted, path)
        updated = apply_edits(content, matches)
        if updated == content:
            raise ToolError(
                f"No change to {path}: the new text equals the text it replaces. If you meant a "
                "change, check newText, including special characters."
            )
        final = bom + (updated.replace("\n", "\r\n") if ending == "\r\n" else updated)
        try:
            await env.write_bytes(full, final.encode("utf-8"))
        except OSError as exc:
            raise os_error(exc, path, "writing") from None
    from pi_plugins.tools.diff import generate_diff, generate_patch

    diff, first_changed = generate_diff(content, updated)
    patch = generate_patch(path, content, updated)
    message = f"Successfully replaced {len(edits)} block(s) in {path}."
    tolerant = [f"edits[{m.index}]" for m in matches if m.tolerant]
    if tolerant:
        message += (
            f" Note: {', '.join(tolerant)} matched only after ignoring trailing whitespace and "
            "quote, dash or space style; check the diff."
        )
    return ToolResult.text(message, {"diff": diff, "patch": patch, "firstChangedLine": first_changed})


def prepare_arguments(arguments: Any) -> Any:
    """Accept the shapes models send besides the schema's: ``edits`` as a JSON string, and
    a single top-level ``oldText``/``newText`` pair (the older edit schema)."""
    if not isinstance(arguments, dict):
        return arguments
    args = dict(arguments)
    if isinstance(args.get("edits"), str):
        try:
            parsed = json.loads(args["edits"])
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            args["edits"] = parsed
    if isinstance(args.get("oldText"), str) and isinstance(args.get("newText"), str):
        edits = list(args["edits"]) if isinstance(args.get("edits"), list) else []
        edits.append({"oldText": args.pop("oldText"), "newText": args.pop("newText")})
        args["edits"] = edits
    return args


@record(eq=False)
class EditTool(Tool):
    def validate(self, arguments: Any) -> Any:
        return super().validate(prepare_arguments(arguments))


edit_tool = EditTool(
    name="edit",
    label="edit",
    description=DESCRIPTION,
    parameters=PARAMETERS,
    function=execute,
    execution_mode="parallel",
)
