"""Notes on the compacted part of a conversation, read straight off its messages: what
the user asked, which commands ran (and which failed), which files were read or changed,
which tools were used, what went wrong, and where the work stood. Deterministic: the
same messages always give the same notes, and no model is asked."""

from __future__ import annotations

from collections import Counter
from typing import Any

from attrs import define, field

from pi_compact_notes import GENERATOR
from pi_core import (
    AssistantMessage,
    BashExecutionMessage,
    CompactionSummaryMessage,
    ToolResultMessage,
    UserMessage,
    text_of,
)


@define
class Limits:
    requests: int = 8
    commands: int = 15
    problems: int = 5
    request_chars: int = 400
    last_reply_chars: int = 1200

    @classmethod
    def from_settings(cls, section: Any) -> Limits:
        section = section if isinstance(section, dict) else {}
        names = {"maxRequests": "requests", "maxCommands": "commands", "maxProblems": "problems"}
        values = {attr: section[key] for key, attr in names.items()
                  if isinstance(section.get(key), int) and section[key] >= 0}
        return cls(**values)


@define
class Notes:
    requests: list[str] = field(factory=list)
    commands: list[str] = field(factory=list)
    read: set[str] = field(factory=set)
    modified: set[str] = field(factory=set)
    tools: Counter = field(factory=Counter)
    problems: list[str] = field(factory=list)
    last_reply: str = ""
    message_count: int = 0

    def add_previous(self, details: Any) -> None:
        """Carry over what an earlier compaction by this plugin noted (older first)."""
        if not isinstance(details, dict) or details.get("generator") != GENERATOR:
            return
        self.requests[:0] = [r for r in details.get("requests") or [] if isinstance(r, str)]
        self.commands[:0] = [c for c in details.get("commands") or [] if isinstance(c, str)]
        self.read.update(f for f in details.get("readFiles") or [] if isinstance(f, str))
        self.modified.update(f for f in details.get("modifiedFiles") or [] if isinstance(f, str))

    def add_messages(self, messages: list) -> None:
        results = {m.tool_call_id: m for m in messages if isinstance(m, ToolResultMessage)}
        for message in messages:
            if isinstance(message, CompactionSummaryMessage):
                continue
            self.message_count += 1
            if isinstance(message, UserMessage):
                text = text_of(message.content).strip()
                if text:
                    self.requests.append(text)
            elif isinstance(message, BashExecutionMessage):
                failed = message.exit_code not in (0, None) or message.cancelled
                self.commands.append(f"`{message.command}` (run by the user" + (", failed)" if failed else ")"))
            elif isinstance(message, AssistantMessage):
                if message.text.strip():
                    self.last_reply = message.text.strip()
                for call in message.tool_calls:
                    self._add_call(call, results.get(call.id))
            elif isinstance(message, ToolResultMessage) and message.is_error:
                first = text_of(message.content).strip().splitlines()
                self.problems.append(f"{message.tool_name}: {first[0] if first else '(no message)'}")

    def _add_call(self, call, result: ToolResultMessage | None) -> None:
        self.tools[call.name] += 1
        args = call.arguments if isinstance(call.arguments, dict) else {}
        path = args.get("path")
        if isinstance(path, str):
            if call.name == "read":
                self.read.add(path)
            elif call.name in ("write", "edit"):
                self.modified.add(path)
        if call.name == "bash" and isinstance(args.get("command"), str):
            status = " (failed)" if result is not None and result.is_error else ""
            self.commands.append(f"`{args['command']}`{status}")

    def render(self, limits: Limits, *, previous_summary: str | None, instructions: str | None) -> str:
        lines = ["# Session notes", "",
                 f"Written by {GENERATOR} from {self.message_count} earlier messages, without a model."]
        if instructions:
            lines += ["", f"Focus asked for: {instructions.strip()}"]
        requests = _last(self.requests, limits.requests, "earlier requests")
        lines += ["", "## User requests", *(f"- {_one_line(r, limits.request_chars)}" for r in requests or ["(none)"])]
        if self.commands:
            lines += ["", "## Commands run", *(f"- {c}" for c in _last(self.commands, limits.commands, "earlier commands"))]
        if self.tools:
            used = ", ".join(f"{name} ×{count}" for name, count in sorted(self.tools.items(), key=lambda i: (-i[1], i[0])))
            lines += ["", "## Tool calls", used]
        if self.problems:
            lines += ["", "## Problems", *(f"- {p}" for p in _last(self.problems, limits.problems, "earlier problems"))]
        if self.last_reply:
            lines += ["", "## Where it stood", _clip(self.last_reply, limits.last_reply_chars)]
        if previous_summary:
            lines += ["", "## Earlier summary", previous_summary.strip()]
        read, modified = self.file_lists()
        if read:
            lines += ["", "<read-files>", *read, "</read-files>"]
        if modified:
            lines += ["", "<modified-files>", *modified, "</modified-files>"]
        return "\n".join(lines)

    def file_lists(self) -> tuple[list[str], list[str]]:
        """(files only read, files modified), sorted."""
        return sorted(self.read - self.modified), sorted(self.modified)

    def details(self, limits: Limits) -> dict:
        read, modified = self.file_lists()
        return {"generator": GENERATOR, "readFiles": read, "modifiedFiles": modified,
                "requests": [_one_line(r, limits.request_chars) for r in self.requests[-limits.requests:]]
                if limits.requests else [],
                "commands": self.commands[-limits.commands:] if limits.commands else []}


def _last(items: list[str], limit: int, what: str) -> list[str]:
    if len(items) <= limit:
        return list(items)
    shown = items[-limit:] if limit else []
    return [f"({len(items) - limit} {what} not shown)", *shown]


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit].rstrip() + " …"


def _one_line(text: str, limit: int) -> str:
    return _clip(" ".join(text.split()), limit)
