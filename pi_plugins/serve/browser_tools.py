"""Tools that run in the page, not in the server: ``javascript_repl``, pi web-ui's
JavaScript REPL. The model writes code; the page runs it in a sandboxed frame and sends
back its console output, its return value or its error.

The tool is offered only while a page is attached: the page says it can run it with
``{"type": "offer_browser_tools", "tools": ["javascript_repl"]}`` after connecting (an RPC
client such as ``pi connect`` never does), and the server registers the tool on the
session; when the last such page leaves it is withdrawn (once the session is idle, so a
call the model already made gets this module's error, not "not found").

A call goes to one page, the one that offered last (the most recently opened), as a
frame to it alone::

    {"type": "browser_tool_request", "id": ID, "toolCallId": ..., "toolName": "javascript_repl",
     "arguments": {"title": ..., "code": ...}, "timeoutMs": 30000}

and the page answers with a command::

    {"type": "browser_tool_result", "requestId": ID, "console": [{"type": "log", "text": ...}],
     "returnValue": <JSON or absent>, "returnText": "<repr>", "error": {"message", "stack"} or absent,
     "files": [{"fileName", "mimeType", "contentBase64"} or {"fileName", "mimeType", "omitted": true}]}

``files`` are what the code handed to ``returnDownloadableFile(fileName, content,
mimeType?)`` (pi web-ui's): named to the model as pi web-ui names them ("[Files returned:
N]"), and kept whole in the result's ``details.files`` (up to :data:`FILES_LIMIT` bytes
a call; the request's ``filesLimit`` tells the page, which sends a file past it as
``omitted`` rather than a frame the server would refuse) so the page offers each for
download or as an artifact.

A call that outlives the ``javascriptReplTimeoutMs`` setting (default
:data:`REPL_TIMEOUT` seconds), is aborted (the page's Abort, ``pi connect``'s
``abort``), or whose page closes gets a tool error, and the page is told
``{"type": "browser_tool_cancel", "id": ID}`` so it drops the frame (and the code with it).
With no page attached the call fails at once; it never waits for a page to come.
"""

from __future__ import annotations

import asyncio
import binascii
import itertools
import json
import logging
import os
from typing import Any

from pi_core.protocol.tools import Tool, ToolResult, ToolRun
from pi_plugins.rpc.protocol import CommandError, dumps

log = logging.getLogger("pi.serve")

#: Seconds a call may run in the page before it is stopped when the
#: ``javascriptReplTimeoutMs`` setting does not say (pi web-ui has no limit; a page left
#: with an endless loop would hold the run for ever).
REPL_TIMEOUT = 30.0
#: The setting that overrides it, in milliseconds as pi's other timeouts are.
TIMEOUT_SETTING = "javascriptReplTimeoutMs"
#: Bytes of returned files one call may keep (they are stored in the session file).
FILES_LIMIT = 10 * 1024 * 1024
#: Characters of console output and return value kept for the model; the rest is cut.
OUTPUT_LIMIT = 50_000
REPL = "javascript_repl"
NO_PAGE = ("javascript_repl runs code in the page of `pi serve`, and no page is attached to this "
           "session: open the session in the page and call it again")

REPL_DESCRIPTION = """# JavaScript REPL

Run JavaScript in a sandboxed frame of the user's browser (the page of `pi serve`) and get back what it printed with console.log/info/warn/error and the value of its last `return`.

- ES2023+, top-level `await` (the code is the body of an async function): `return` the value you want back.
- Browser APIs that need no network: DOM, Canvas, Crypto, Intl, TextEncoder, structuredClone …
- No network at all: fetch, WebSocket and `import()` from URLs are refused; nothing persists between calls.
- `await returnDownloadableFile(fileName, content, mimeType?)` hands the user a file (a string, an object as JSON, a Blob or a Uint8Array, which need a MIME type); the user can download it or open it as an artifact. You are told its name and type, not its content.
- Files the user attached in the page: `listAttachments()` gives `[{{id, fileName, mimeType, size}}]`, `readTextAttachment(id)` a string, `readBinaryAttachment(id)` a Uint8Array (a PDF, a workbook, an image).
- Stopped after {timeout:g} seconds.

Use it for calculations, data transformations and trying out JavaScript snippets."""


class BrowserTools:
    """The page-run tools of one served session: which attached clients can run them
    (``offer``/``withdraw``), and the calls under way, each waiting for its page."""

    def __init__(self, served: Any) -> None:
        self.served = served
        #: The clients that offered to run the tools, oldest first (a call goes to the last).
        self.pages: list[Any] = []
        #: Call id -> (the client running it, the future its answer settles).
        self.calls: dict[str, tuple[Any, asyncio.Future]] = {}
        self._ids = itertools.count(1)
        self._withdrawing: asyncio.Task | None = None
        self.tool = Tool(name=REPL, label="JavaScript REPL", description=REPL_DESCRIPTION.format(timeout=self.timeout()),
                         parameters={
                             "type": "object",
                             "properties": {
                                 "title": {"type": "string", "description": (
                                     "Brief title describing what the code snippet tries to achieve in "
                                     "active form, e.g. 'Calculating sum'")},
                                 "code": {"type": "string", "description": "JavaScript code to execute"},
                             },
                             "required": ["title", "code"],
                         },
                         function=self.run, summarize=lambda args: f"javascript_repl {args.get('title', '')}".strip())

    def timeout(self) -> float:
        """Seconds a call may run: the ``javascriptReplTimeoutMs`` setting (a positive
        number), else :data:`REPL_TIMEOUT`."""
        try:
            value = self.served.harness.ctx.settings.get(TIMEOUT_SETTING)
        except Exception:  # noqa: BLE001 - no settings: the default
            value = None
        if value is None:
            return REPL_TIMEOUT
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            log.warning("%s must be a positive number of milliseconds, not %r: using %g s",
                        TIMEOUT_SETTING, value, REPL_TIMEOUT)
            return REPL_TIMEOUT
        return value / 1000

    # ------------------------------------------------------------ pages

    def offer(self, client: Any, tools: Any) -> list[str]:
        """``client`` (a page) runs ``tools``; returns those this server has."""
        if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
            raise CommandError("tools must be a list of tool names")
        if REPL not in tools:
            return []
        if client in self.pages:
            self.pages.remove(client)
        self.pages.append(client)
        if self._withdrawing is not None:
            self._withdrawing.cancel()
            self._withdrawing = None
        self.served.harness.register_tool(self.tool)
        return [REPL]

    def keep_offered(self) -> None:
        """At a run's start: offered again if a page is attached but a reload
        (``ctx.reload``) collected the tools anew without it."""
        agent = self.served.harness.agent
        if self.pages and all(t.name != REPL for t in agent.tools or []):
            self.served.harness.register_tool(self.tool)

    def withdraw(self, client: Any) -> None:
        """``client`` left: its calls fail now; with no page left the tool goes once idle."""
        for runner, future in list(self.calls.values()):
            if runner is client and not future.done():
                future.set_exception(BrowserToolError(
                    "the page running the code closed before it finished (no result)"))
        if client not in self.pages:
            return
        self.pages.remove(client)
        if not self.pages and self._withdrawing is None:
            self._withdrawing = asyncio.get_running_loop().create_task(self._withdraw_when_idle())

    async def _withdraw_when_idle(self) -> None:
        try:
            await self.served.harness.wait_for_idle()
            if not self.pages:
                self.served.harness.unregister_tool(REPL)
        finally:
            self._withdrawing = None

    def close(self) -> None:
        """The session closes: every call under way fails, nothing waits."""
        if self._withdrawing is not None:
            self._withdrawing.cancel()
        for _, future in self.calls.values():
            if not future.done():
                future.set_exception(BrowserToolError("the session closed before the code finished"))
        self.pages.clear()

    # ------------------------------------------------------------ calls

    def answer(self, command: dict, client: Any) -> dict:
        """The page's ``browser_tool_result`` for call ``requestId``, from ``client``."""
        call_id = command.get("requestId")
        entry = self.calls.get(call_id) if isinstance(call_id, str) else None
        if entry is None:
            raise CommandError(f"no browser tool call {call_id!r} is waiting (it timed out, was aborted or ended)")
        runner, future = entry
        if runner is not client:
            raise CommandError(f"browser tool call {call_id!r} runs in another client; only it may answer")
        if not future.done():
            future.set_result(command)
        return {"accepted": True}

    async def run(self, args: dict, run: ToolRun) -> ToolResult:
        if not self.pages:
            return ToolResult.error(NO_PAGE)
        client = self.pages[-1]
        timeout = self.timeout()
        call_id = f"browser-{next(self._ids)}"
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        self.calls[call_id] = (client, future)
        client.put(dumps({"type": "browser_tool_request", "id": call_id, "toolCallId": run.tool_call_id,
                          "toolName": REPL, "arguments": {"title": args.get("title", ""), "code": args["code"]},
                          "timeoutMs": int(timeout * 1000), "filesLimit": FILES_LIMIT}).decode("utf-8"))
        aborted = asyncio.ensure_future(run.signal.wait())
        reason = "Execution aborted"  # also when the run cancels this task
        try:
            done, _ = await asyncio.wait({future, aborted}, timeout=timeout,
                                         return_when=asyncio.FIRST_COMPLETED)
            if future in done:
                return result_of(future.result())
            if aborted not in done:
                reason = (f"Execution timed out after {timeout:g} s: the code was stopped (an endless "
                          f"loop, or a promise that never settles?); the {TIMEOUT_SETTING} setting sets the limit")
            return ToolResult.error(reason)
        except BrowserToolError as exc:
            return ToolResult.error(f"Error: {exc}")
        finally:
            aborted.cancel()
            self.calls.pop(call_id, None)
            if not future.done():  # the page drops the frame, and the code with it
                future.cancel()
                client.put(dumps({"type": "browser_tool_cancel", "id": call_id, "reason": reason}).decode("utf-8"))


class BrowserToolError(Exception):
    """A page-run call that ended without the page's answer."""


def result_of(answer: dict) -> ToolResult:
    """The page's answer as pi web-ui words it: the console lines, then ``=> value``, then
    "[Files returned: N]" and each file's name and type, or ``Error: message`` and the
    stack (a tool error); "Code executed successfully (no output)" when there is nothing."""
    lines = []
    for entry in answer.get("console") or []:
        if isinstance(entry, dict):
            lines.append(str(entry.get("text", "")))
    output = "\n".join(lines)
    error = answer.get("error")
    if error is not None:
        message = error.get("message") if isinstance(error, dict) else str(error)
        stack = error.get("stack") if isinstance(error, dict) else ""
        text = (output + "\n\n" if output else "") + f"Error: {message or 'Unknown error'}\n{stack or ''}"
        return ToolResult.text(_cut(text.strip()), {"files": []}, is_error=True)
    if "returnText" in answer or "returnValue" in answer:
        value = answer.get("returnText")
        if not isinstance(value, str):
            value = json.dumps(answer.get("returnValue"), indent=2, ensure_ascii=False)
        output += ("\n\n" if output else "") + f"=> {value}"
    files, refused = returned_files(answer.get("files"))
    output = _cut(output.strip())
    if files:
        output += f"\n[Files returned: {len(files)}]\n" + "\n".join(
            f"  - {f['fileName']} ({f['mimeType']})" for f in files)
    if refused:
        output += "\n[Files not kept: " + "; ".join(refused) + "]"
    return ToolResult.text(output.strip() or "Code executed successfully (no output)", {"files": files})


def returned_files(raw: Any) -> tuple[list[dict], list[str]]:
    """The files a call returned, checked: ``[{fileName, mimeType, size, contentBase64}]``
    (the name without folders), and why each one left out was (not base64, over
    :data:`FILES_LIMIT` in all, malformed)."""
    if not isinstance(raw, list):
        return [], [] if raw is None else ["files must be a list"]
    files: list[dict] = []
    refused: list[str] = []
    total = 0
    for item in raw:
        if isinstance(item, dict) and isinstance(item.get("fileName"), str) and item.get("omitted") is True:
            # the page left its content out: past ``filesLimit`` in all, or too big to send
            refused.append(f"{os.path.basename(item['fileName'])}: over {FILES_LIMIT:,} bytes of files in one call")
            continue
        if not isinstance(item, dict) or not isinstance(item.get("fileName"), str) \
                or not isinstance(item.get("contentBase64"), str):
            refused.append("a file without a name or content")
            continue
        name = os.path.basename(item["fileName"].replace("\\", "/")).strip() or "file"
        mime = item.get("mimeType") if isinstance(item.get("mimeType"), str) and item["mimeType"] else \
            "application/octet-stream"
        try:
            size = len(binascii.a2b_base64(item["contentBase64"].encode("ascii"), strict_mode=True))
        except (binascii.Error, UnicodeEncodeError, ValueError):
            refused.append(f"{name}: its content is not base64")
            continue
        if total + size > FILES_LIMIT:
            refused.append(f"{name}: over {FILES_LIMIT:,} bytes of files in one call")
            continue
        total += size
        files.append({"fileName": name, "mimeType": mime, "size": size, "contentBase64": item["contentBase64"]})
    return files, refused


def _cut(text: str) -> str:
    if len(text) <= OUTPUT_LIMIT:
        return text
    return text[:OUTPUT_LIMIT] + f"\n… [{len(text) - OUTPUT_LIMIT} more characters cut]"


class BrowserToolCommands:
    """The page's two commands (mixed into :class:`pi_plugins.serve.tree_commands.ServeCommands`)."""

    served: Any
    client: Any

    async def cmd_offer_browser_tools(self, c: dict) -> Any:
        if self.client is None:
            raise CommandError("this connection cannot run browser tools")
        return {"tools": self.served.browser_tools.offer(self.client, c.get("tools"))}

    async def cmd_browser_tool_result(self, c: dict) -> Any:
        return self.served.browser_tools.answer(c, self.client)
