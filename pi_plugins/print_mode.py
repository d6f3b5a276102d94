"""Print and JSON modes: run the prompt(s) once and exit.

``pi -p`` prints the final assistant message's text (or, on failure, its error on
stderr with exit code 1). ``pi --mode json`` prints the session header, then one line per
event. Its ``message_update`` lines carry the streamed delta only, so the output grows
linearly with the answer; ``--events full`` adds pi's message snapshot to every update,
for clients that read it.
"""

from __future__ import annotations

import json

from pi_core import hookimpl
from pi_core.protocol.codec import to_json
from pi_core.protocol.shell import Mode


def event_line(event, full: bool = False) -> str:
    """One JSON line for an event, in pi's shape (lean ``message_update`` by default)."""
    return json.dumps(event_json(event, full), ensure_ascii=False, separators=(",", ":"))


def event_json(event, full: bool = False) -> dict:
    """The JSON value of an event, in pi's shape. ``message_update`` is pi 1.6's by
    default: the delta and the answer's usage so far, no snapshots (linear in the
    answer's length); ``full`` is pi 0.73's, with the whole partial message each time."""
    if event.type != "message_update":
        value = to_json(event)
        value.pop("turnIndex", None)  # for plugins; pi's JSON events have none
        return value
    value = {"type": "message_update"}
    if not full:
        value["usage"] = to_json(event.message.usage)
    value["assistantMessageEvent"] = stream_event_json(event.assistant_message_event, full)
    if full:
        partial = getattr(event.assistant_message_event, "partial", None)
        snapshot = value["assistantMessageEvent"].get("partial")
        # The partial usually is the message: convert it once.
        value["message"] = snapshot if partial is event.message and snapshot is not None \
            else to_json(event.message)
    return value


def stream_event_json(event, full: bool = False) -> dict:
    """A provider stream event without its ``partial`` snapshot (unless ``full``)."""
    value = {"type": event.type}
    for name, key in (("content_index", "contentIndex"), ("delta", "delta"), ("content", "content"),
                      ("reason", "reason")):
        if hasattr(event, name):
            value[key] = getattr(event, name)
    if event.type == "toolcall_start":  # pi 1.6 names the call as it starts
        block = _block(event)
        value["id"], value["toolName"] = getattr(block, "id", ""), getattr(block, "name", "")
    if getattr(event, "tool_call", None) is not None:
        value["toolCall"] = to_json(event.tool_call)
    for name in ("message", "error"):
        if getattr(event, name, None) is not None:
            value[name] = to_json(getattr(event, name))
    if full and getattr(event, "partial", None) is not None:
        value["partial"] = to_json(event.partial)
    return value


def _block(event):
    partial, index = getattr(event, "partial", None), getattr(event, "content_index", 0)
    content = getattr(partial, "content", None) or []
    return content[index] if 0 <= index < len(content) else None


def _headless_ui(app) -> None:
    """``ctx.ui`` here: the defaults of a UI that is not there (dialogs answer no or
    nothing, notifications are logged) and pi's no-op component calls, so a plugin made
    for the chat runs in ``-p`` too (``has_ui`` stays False)."""
    from pi_core.context import NullUI
    from pi_plugins.headless_ui import PrintUI

    ctx = app.harness.ctx
    if type(getattr(ctx.ui, "wrapped", ctx.ui)) is NullUI:  # the app wraps any UI (ui_prompt_start)
        app.harness.set_ui(PrintUI())


async def _prompts(app) -> None:
    _headless_ui(app)
    first = app.initial_prompt()
    if first.text is not None or first.images:
        await app.harness.prompt(first.text or "", first.images, source="print")
    for message in app.rest_messages()[1:]:
        await app.harness.wait_for_idle()
        await app.harness.prompt(message, source="print")
    await app.harness.wait_for_idle()  # runs a plugin started (ctx.send_user_message)


async def run_print(app) -> int:
    await _prompts(app)
    from pi_plugins.budget import stop_of

    stop = stop_of(app.harness.ctx)
    if stop is not None:  # the budget ended the run before a request: exit status 3
        app.stderr.write(f"budget reached: {stop.describe()}\n")
        return 3
    last = app.harness.messages[-1] if app.harness.messages else None
    if last is None or last.role != "assistant":
        return 0
    if last.stop_reason in ("error", "aborted"):
        app.stderr.write((last.error_message or f"Request {last.stop_reason}") + "\n")
        return 1
    for block in last.content:
        if block.type == "text":
            app.write(block.text + "\n")
    return 0


async def run_json(app) -> int:
    full = app.args.events == "full"
    app.write(json.dumps(to_json(app.harness.session.header), ensure_ascii=False,
                         separators=(",", ":")) + "\n")
    app.harness.subscribe(lambda event: app.write(event_line(event, full) + "\n"))
    await _prompts(app)
    return 0


@hookimpl
def register_modes():
    return [Mode("text", run_print, "print the answer and exit (-p)"),
            Mode("json", run_json, "one JSON event per line")]
