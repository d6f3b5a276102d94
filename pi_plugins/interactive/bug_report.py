"""``/bug [description]``: pi 1.6's bug report, as a zip written here for the user to
look at and share (pi 1.6 also offers to upload it to its own service, which this harness
does not use). The report holds what pi's does: the environment, the model, the plugins,
the settings with credential-like values left out, the errors the session recorded, the
crash records of ``crashes.json`` (cleared once attached), and the transcript if the user
says so, with every key pi holds redacted."""

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
INCLUDE, OMIT = "Include the session transcript", "Leave the transcript out"


def _without_secrets(value: Any, key: str = "") -> Any:
    if _SECRET.search(key) and not isinstance(value, (dict, list, bool)):
        return "[redacted]"
    if isinstance(value, dict):
        return {k: _without_secrets(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_secrets(v, key) for v in value]
    return value


def build_report(tui: ChatPort, description: str) -> dict:
    from pi_core import __version__

    harness = tui.harness
    ctx = harness.ctx
    settings = ctx.settings
    errors = [{"provider": m.provider, "model": m.model, "stopReason": m.stop_reason, "error": m.error_message}
              for m in harness.messages
              if getattr(m, "role", None) == "assistant" and m.stop_reason in ("error", "aborted")]
    return {
        "description": description,
        "createdAt": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "version": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "terminal": {"TERM": os.environ.get("TERM"), "TERM_PROGRAM": os.environ.get("TERM_PROGRAM")},
        "model": f"{harness.model.provider}/{harness.model.id}",
        "thinkingLevel": harness.thinking_level,
        "plugins": [{"name": i.name, "source": i.source} for i in harness.plugins.infos],
        "settings": {"global": _without_secrets(getattr(settings, "global_data", {})),
                     "project": _without_secrets(getattr(settings, "project_data", {}))},
        "sessionId": harness.session.id,
        "errors": errors,
        "crashes": read_crash_log(crash_log_path(ctx.agent_dir)),
    }


def write_report(tui: ChatPort, report: dict, transcript: bool, folder: Path) -> Path:
    from pi_plugins.keys.rules import held_keys, redact

    keys = held_keys()
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    target = folder / f"pi-bug-report-{stamp}.zip"
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("report.json", redact(json.dumps(report, indent=2, ensure_ascii=False), keys) + "\n")
        session_file = tui.harness.session.file
        if transcript and session_file is not None and Path(session_file).exists():
            archive.writestr("session.jsonl", redact(Path(session_file).read_text(encoding="utf-8"), keys))
    return target


async def bug(tui: ChatPort, args: str) -> None:
    description = args.strip()
    if not description:
        from pi_plugins.interactive.dialogs import InputDialog

        answer = await tui.show_dialog(InputDialog(tui.painter, "Describe the problem",
                                                   "what happened, and what you expected"))
        if answer is None:
            return
        description = answer.strip()
    choice = await tui.ui.select("Bug report: the transcript can hold private conversation data", [INCLUDE, OMIT])
    if choice is None:
        return
    report = build_report(tui, description)
    folder = Path(tui.harness.ctx.cwd)
    try:
        target = write_report(tui, report, choice == INCLUDE, folder)
    except OSError as exc:
        tui.add_text(f"Could not write the bug report: {exc}", "error")
        return
    if report["crashes"]:
        crash_log_path(tui.harness.ctx.agent_dir).unlink(missing_ok=True)
    tui.add_text(f"Bug report written to {target}. Look it over, then share it with the developers "
                 "(this harness uploads nothing).", "dim")
