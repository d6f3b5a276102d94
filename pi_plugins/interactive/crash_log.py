"""pi 1.6's crash log: a crash of the chat is recorded in ``<agent dir>/crashes.json``
(the last five: when, version, kind, message, stack, session file, folder), the crash
says how to report it, and the next start says once that pi crashed and to run ``/bug``,
which attaches the records (:mod:`.bug_report`)."""

from __future__ import annotations

import json
import os
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

MAX_RECORDS = 5
MAX_AGE_SECONDS = 7 * 24 * 60 * 60  # an older crash is not announced any more
APP_NAME = "pi"


def crash_log_path(agent_dir: str | os.PathLike) -> Path:
    return Path(agent_dir) / "crashes.json"


def read_crash_log(path: Path) -> list[dict]:
    """The records (an unreadable or malformed file is no records)."""
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if not isinstance(records, list):
        return []
    return [r for r in records if isinstance(r, dict) and isinstance(r.get("timestamp"), str)
            and isinstance(r.get("message"), str)]


def _write(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(records, indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, path)


def record_crash(agent_dir: str | os.PathLike, kind: str, error: BaseException, *,
                 session_file: str | None, cwd: str) -> dict | None:
    """Best effort, as the chat is already crashing: the record written, or None."""
    from pi_core import __version__

    try:
        path = crash_log_path(agent_dir)
        record = {
            "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "version": __version__,
            "kind": kind,
            "message": str(error) or type(error).__name__,
            "stack": "".join(traceback.format_exception(error)),
            "sessionFile": session_file,
            "cwd": cwd,
        }
        _write(path, [*read_crash_log(path), record][-MAX_RECORDS:])
        return record
    except Exception:
        return None


def report_instructions(session_file: str | None) -> str:
    resume = f"run `{APP_NAME} -r` to resume the session, then" if session_file else f"start {APP_NAME} and"
    return f"To report this crash: {resume} run /bug. The crash details are attached automatically."


def take_unnotified_crash(agent_dir: str | os.PathLike, now: datetime | None = None) -> dict | None:
    """The newest crash of the last week not announced yet; every record is then
    marked announced (the notice shows once)."""
    path = crash_log_path(agent_dir)
    records = read_crash_log(path)
    moment = now or datetime.now(UTC)

    def recent(record: dict) -> bool:
        try:
            when = datetime.fromisoformat(record["timestamp"].replace("Z", "+00:00"))
        except ValueError:
            return False
        return (moment - when).total_seconds() <= MAX_AGE_SECONDS

    crash = next((r for r in reversed(records) if not r.get("notified") and recent(r)), None)
    if crash is None:
        return None
    try:
        _write(path, [{**r, "notified": True} for r in records])
    except OSError:
        pass  # shown again next time: harmless
    return crash


def crash_notice(crash: dict) -> str:
    """pi's words for a crash found at start."""
    try:
        when = datetime.fromisoformat(crash["timestamp"].replace("Z", "+00:00")).astimezone()
        shown = when.strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        shown = crash["timestamp"]
    return (f"{APP_NAME} crashed on {shown} ({crash['message']}). Run /bug to report it; "
            "the crash details are attached automatically.")


def announce(tui: Any) -> None:
    """At the chat's start: the last crash, once."""
    crash = take_unnotified_crash(tui.harness.ctx.agent_dir)
    if crash is not None:
        tui.add_text(crash_notice(crash), "warning")
