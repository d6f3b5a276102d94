"""``/bug [description]``: pi 1.6's bug report, as a zip written here for the user to
look at and share (pi 1.6 also offers to upload it to its own service, which this harness
does not use). The report holds what pi's does: the environment, the model, the plugins,
the settings with credential-like values left out, the errors the session recorded, the
crash records of ``crashes.json`` (cleared once attached), and the transcript if the user
says so, or else, if they ask, a summary the current model writes of it
(:mod:`.bug_summary`), with every key pi holds redacted. As pi 1.6 does, the session
records the report in a ``pi.bug-report`` custom entry (its id, time, description, what
it holds and where it went)."""

from __future__ import annotations

import json
import os
import platform
import re
import sys
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_plugins.interactive.crash_log import crash_log_path, read_crash_log

if TYPE_CHECKING:
    from pi_plugins.interactive.port import ChatPort

_SECRET = re.compile(r"key|token|secret|password|auth|credential", re.I)
ENTRY_TYPE = "pi.bug-report"  # pi 1.6's custom entry
INCLUDE, NO = "Yes, include the transcript", "No"
SUMMARIZE = "Yes, generate a summary"
EXPORT, CANCEL = "Export as Zip", "Cancel"
TRANSCRIPT_NOTE = ("The transcript holds your messages, the model's answers, the tool calls and their results, "
                   "with the file contents and command output read in this session.")


def _without_secrets(value: Any, key: str = "") -> Any:
    if _SECRET.search(key) and not isinstance(value, (dict, list, bool)):
        return "[redacted]"
    if isinstance(value, dict):
        return {k: _without_secrets(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_secrets(v, key) for v in value]
    return value


def build_report(tui: ChatPort, description: str, *, report_id: str = "", transcript: bool = False,
                 summary: bool = False) -> dict:
    from pi_core import __version__

    harness = tui.harness
    ctx = harness.ctx
    settings = ctx.settings
    errors = [{"provider": m.provider, "model": m.model, "stopReason": m.stop_reason, "error": m.error_message}
              for m in harness.messages
              if getattr(m, "role", None) == "assistant" and m.stop_reason in ("error", "aborted")]
    return {
        "id": report_id,
        "description": description,
        "createdAt": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "version": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "terminal": {"TERM": os.environ.get("TERM"), "TERM_PROGRAM": os.environ.get("TERM_PROGRAM")},
        "model": f"{harness.model.provider}/{harness.model.id}",
        "thinkingLevel": harness.thinking_level,
        "plugins": [{"name": i.name, "source": i.source} for i in harness.plugins.infos],
        "settings": {"global": _without_secrets(getattr(settings, "global_data", {})),
                     "project": _without_secrets(getattr(settings, "project_data", {}))},
        "session": {"id": harness.session.id, "included": transcript, "summaryIncluded": summary,
                    "messageCount": len(harness.messages)},
        "sessionId": harness.session.id,
        "errors": errors,
        "crashes": read_crash_log(crash_log_path(ctx.agent_dir)),
    }


def write_report(tui: ChatPort, report: dict, transcript: bool, folder: Path, summary: str | None = None) -> Path:
    from pi_plugins.keys.rules import held_keys, redact

    keys = held_keys()
    target = folder / f"pi-bug-report-{report['id']}.zip"  # pi 1.6's name
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("report.json", redact(json.dumps(report, indent=2, ensure_ascii=False), keys) + "\n")
        session_file = tui.harness.session.file
        if transcript and session_file is not None and Path(session_file).exists():
            archive.writestr("session.jsonl", redact(Path(session_file).read_text(encoding="utf-8"), keys))
        if summary is not None:
            archive.writestr("summary.md", redact(summary if summary.endswith("\n") else summary + "\n", keys))
    return target


async def _choices(tui: ChatPort, args: str) -> tuple[str, bool, bool] | None:
    """pi 1.6's questions: the description (prefilled with the command's), the transcript,
    else a summary instead, then export or cancel. None: cancelled."""
    from pi_plugins.interactive.dialogs import InputDialog, Item, ListDialog

    async def choose(title: str, options: list[str], note: str) -> str | None:
        return await tui.show_dialog(ListDialog(tui.painter, title, [Item(o, o) for o in options], subtitle=note))

    answer = await tui.show_dialog(InputDialog(tui.painter, "Report a bug", "What went wrong? (optional)",
                                               text=args.strip()))
    if answer is None:
        return None
    description = answer.strip()
    transcript = await choose("Include the session transcript?", [INCLUDE, NO], TRANSCRIPT_NOTE)
    if transcript is None:
        return None
    summary = False
    model = tui.harness.model
    if transcript == NO:
        asked = await choose(f"Attach a summary written by {model.name or model.id} instead?", [SUMMARIZE, NO],
                             f"The transcript is sent to {model.provider} with your credentials and tokens. Only the "
                             "summary goes in the report; the transcript stays on your machine.")
        if asked is None:
            return None
        summary = asked == SUMMARIZE
    written = f"written by {model.name or model.id}" if summary else "none"
    delivery = await choose("Bug report", [EXPORT, CANCEL],
                            f"Description: {description or 'none'} · Transcript: "
                            f"{'included' if transcript == INCLUDE else 'not included'} · Summary: {written}. "
                            "Export writes a zip archive to the current directory (this harness uploads nothing).")
    if delivery != EXPORT:
        return None
    return description, transcript == INCLUDE, summary


async def bug(tui: ChatPort, args: str) -> None:
    from pi_core.protocol.entries import new_session_id

    choices = await _choices(tui, args)
    if choices is None:
        tui.add_text("Bug report cancelled", "dim")
        return
    description, transcript, summarize = choices
    summary = None
    if summarize:
        from pi_plugins.interactive.bug_summary import SummaryFailed, write_summary

        model = tui.harness.model
        try:
            summary = await tui.busy_with("bug report summary",
                                          f"Writing summary with {model.name or model.id}... (esc to cancel)",
                                          write_summary(tui.harness, description or None))
        except SummaryFailed as exc:
            cancelled = "cancelled" in str(exc)
            tui.add_text("Bug report cancelled" if cancelled else f"Failed to write bug report summary: {exc}",
                         "dim" if cancelled else "error")
            return
        if summary is None:  # the agent was busy: said so
            return
    report = build_report(tui, description, report_id=new_session_id(), transcript=transcript,
                          summary=summary is not None)
    folder = Path(tui.harness.ctx.cwd)
    try:
        target = write_report(tui, report, transcript, folder, summary)
    except OSError as exc:
        tui.add_text(f"Failed to write bug report: {exc}", "error")
        return
    tui.harness.append_entry(ENTRY_TYPE, {
        "id": report["id"], "createdAt": report["createdAt"], "hint": description or None,
        "sessionIncluded": transcript, "summaryIncluded": summary is not None, "delivery": "zip", "path": str(target)})
    if report["crashes"]:
        crash_log_path(tui.harness.ctx.agent_dir).unlink(missing_ok=True)
    tui.add_text(f"Bug report exported to: {target}\nReport ID: {report['id']}", "dim")
