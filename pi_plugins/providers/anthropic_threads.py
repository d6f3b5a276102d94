"""Anthropic message threads (pi 1.6): with a session id, a request sends only the
messages the server has not seen and continues from the previous reply.

Where the model's endpoint takes them (``compat.supportsMessageThreads``; by default a
base URL on api.anthropic.com, as gateways may drop the unknown field) and the session
has an id (and ``PI_CACHE_RETENTION`` is not ``none``), every request carries the
``message-threads-2026-08-12`` beta and a ``thread`` field:

- ``{"type": "create"}`` on a full request;
- ``{"type": "continue", "previous_message_id": <the reply's id>}`` on a request whose
  leading messages are exactly the previous request's and its reply (compared without
  cache markers) and whose fixed fields (model, system, tools, thinking, output config,
  tool choice) are unchanged: then ``system`` and ``tools`` are left out and only the new
  messages are sent. Each reply is continued once.

A rejected ``continue`` (``error.details.error_code`` ``thread_not_found``,
``thread_already_continued``, ``thread_continue_in_flight``,
``thread_fingerprint_mismatch``) is sent again in full as a new thread; an endpoint that
cannot use threads (``thread_unsupported_request``, or a 400 without a code that names
``thread``) gets the full request without ``thread``, and threads stay off for that
session. Any other error is the answer's. A request with ``disable_continuation`` (pi
1.6's ``disableContinuation``, a cache warm-up) carries the beta but no ``thread`` and
leaves the session's thread as it was; a session that ends forgets its thread (pi 1.6's
``cleanupSessionResources``). Facts from pi 1.6 run against a stand-in.
"""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Any

import attrs

from pi_core.protocol.model import Model
from pi_core.protocol.provider import LlmContext, StreamOptions
from pi_plugins.providers.http import HttpRequest

MESSAGE_THREADS_BETA = "message-threads-2026-08-12"
NEW_THREAD_ERRORS = frozenset({"thread_not_found", "thread_already_continued", "thread_continue_in_flight",
                               "thread_fingerprint_mismatch"})
UNSUPPORTED = "thread_unsupported_request"
MAX_SESSIONS = 10_000
_FIXED = ("system", "tools", "thinking", "output_config", "tool_choice", "betas", "fallbacks")
OFF = "off"


def supports_threads(model: Model) -> bool:
    value = (model.compat or {}).get("supportsMessageThreads")
    return bool(value) if value is not None else "api.anthropic.com" in model.base_url


def applies(model: Model, session_id: str | None) -> bool:
    """Whether this request may use a thread: an endpoint that takes them, a session id,
    and prompt caching not switched off."""
    return bool(session_id) and supports_threads(model) and os.environ.get("PI_CACHE_RETENTION") != "none"


def _normal(value: Any) -> Any:
    """A message as the API reads it: no cache markers (they move from request to request),
    a string content as one text block (how the newest message is sent to carry a marker)."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "cache_control":
                continue
            if key == "content" and isinstance(item, str):
                item = [{"type": "text", "text": item}]
            out[key] = _normal(item)
        return out
    if isinstance(value, list):
        return [_normal(item) for item in value]
    return value


def prefix_hash(model: Model, body: dict, messages: list) -> str:
    settings = [model.provider, model.base_url, body.get("model"), *(body.get(key) for key in _FIXED)]
    text = json.dumps([settings, _normal(messages)], sort_keys=True, separators=(",", ":"))
    import hashlib  # (with OpenSSL's bindings, 6M instructions: not for a start that sends no Anthropic request)

    return hashlib.sha256(text.encode()).hexdigest()


class ThreadState:
    """Per session: where its next request can continue (``(count, hash, reply id)``), or
    :data:`OFF` after its endpoint refused threads. At most :data:`MAX_SESSIONS` sessions
    are remembered (the least recently updated go first: their threads have expired)."""

    def __init__(self) -> None:
        self._sessions: OrderedDict[str, Any] = OrderedDict()

    def _set(self, session_id: str, value: Any) -> None:
        self._sessions.pop(session_id, None)
        self._sessions[session_id] = value
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.popitem(last=False)

    def thread_body(self, model: Model, session_id: str, body: dict) -> dict | None:
        """The body to send (the full ``body`` marked to create a thread, or only the new
        messages continuing the last reply); None when the session's threads are off."""
        state = self._sessions.get(session_id)
        if state == OFF:
            return None
        messages = body.get("messages") or []
        if state is not None:
            count, digest, reply_id = state
            if len(messages) > count and prefix_hash(model, body, messages[:count]) == digest:
                del self._sessions[session_id]  # a reply is continued once
                rest = {k: v for k, v in body.items() if k not in ("system", "tools")}
                return {**rest, "messages": messages[count:],
                        "thread": {"type": "continue", "previous_message_id": reply_id}}
        return {**body, "thread": {"type": "create"}}

    def record(self, model: Model, session_id: str, body: dict, reply: list[dict], reply_id: str | None) -> None:
        """After a clean answer to a thread request (``body`` the full request, ``reply``
        the answer converted as the next request will send it): where to continue."""
        if not reply_id:
            return
        prefix = [*(body.get("messages") or []), *reply]
        self._set(session_id, (len(prefix), prefix_hash(model, body, prefix), reply_id))

    def turn_off(self, session_id: str) -> None:
        self._set(session_id, OFF)

    def forget(self, session_id: str | None = None) -> None:
        if session_id is None:
            self._sessions.clear()
        else:
            self._sessions.pop(session_id, None)


def rejection(status: int, text: str) -> str | None:
    """What a refused thread request calls for: ``"new"`` (send it again as a new thread),
    ``"off"`` (send it without a thread; threads off for the session) or None (the error
    is not about the thread)."""
    code = None
    try:
        data = json.loads(text)
        details = (data.get("error") or {}).get("details") or {}
        code = details.get("error_code") if isinstance(details.get("error_code"), str) else None
    except (ValueError, AttributeError):
        pass
    if code in NEW_THREAD_ERRORS:
        return "new"
    if code == UNSUPPORTED or (code is None and status == 400 and "thread" in text):
        return "off"
    return None


class _Thread:
    """One request that may go in a thread: its model and session, the full body (kept to
    send again when the thread is refused) and whether a ``thread`` went out."""

    __slots__ = ("model", "session_id", "oauth", "full", "threaded")

    def __init__(self, model: Model, session_id: str):
        self.model, self.session_id = model, session_id
        self.oauth = False
        self.full: dict = {}
        self.threaded = False


class _ReadResponse:
    """A response whose error body was read to see whether it was about the thread: the
    same status, headers and body, for the provider's ordinary error handling."""

    def __init__(self, response: Any, data: bytes):
        self.status_code, self.headers, self.reason_phrase = response.status_code, response.headers, response.reason_phrase
        self._data = data
        self.is_closed = False

    async def aiter_bytes(self):
        yield self._data

    async def aclose(self) -> None:
        self.is_closed = True


class ThreadedMessages:
    """Message threads for the ``anthropic-messages`` provider (mixed in before
    :class:`~pi_plugins.providers.http.SseProvider`). Through the request's own steps: the
    beta joins the headers (before the ``before_provider_headers`` hooks see them), the
    body is trimmed to the new messages after the ``before_provider_request`` hooks (as
    pi 1.6 threads the payload its hooks returned), a refused thread is sent again in full,
    and each clean reply is remembered."""

    threads = ThreadState()  # one per process, as pi 1.6 keeps it
    _pending: dict[int, _Thread] = {}

    async def stream(self, model: Model, context: LlmContext, options: StreamOptions) -> AsyncIterator[Any]:
        if not applies(model, options.session_id):
            async for event in super().stream(model, context, options):  # type: ignore[misc]
                yield event
            return
        thread = _Thread(model, options.session_id or "")
        hooks_payload, hooks_headers = options.on_payload, options.on_headers

        async def on_payload(body: dict) -> dict:
            if hooks_payload is not None:
                body = await hooks_payload(body)
            thread.full = dict(body)
            if options.disable_continuation:  # pi 1.6: the full request, the thread left as it was
                return body
            sent = self.threads.thread_body(model, thread.session_id, body)
            thread.threaded = sent is not None
            return sent if sent is not None else body

        async def on_headers(headers: dict) -> dict:
            betas = next((v for k, v in headers.items() if k.lower() == "anthropic-beta"), None)
            thread.oauth = "oauth-2025-04-20" in (betas or "")
            headers = {k: v for k, v in headers.items() if k.lower() != "anthropic-beta"}
            headers["anthropic-beta"] = f"{betas},{MESSAGE_THREADS_BETA}" if betas else MESSAGE_THREADS_BETA
            return await hooks_headers(headers) if hooks_headers is not None else headers

        options = attrs.evolve(options, on_payload=on_payload, on_headers=on_headers)
        self._pending[id(options)] = thread
        try:
            async for event in super().stream(model, context, options):  # type: ignore[misc]
                if event.type == "done" and thread.threaded:
                    self._record(thread, event.message)
                yield event
        finally:
            self._pending.pop(id(options), None)

    async def _send(self, client: Any, request: HttpRequest, body: dict, options: StreamOptions,
                    watch: Any) -> tuple[Any, int]:
        response, sent = await super()._send(client, request, body, options, watch)  # type: ignore[misc]
        thread = self._pending.get(id(options))
        if thread is None or not thread.threaded or response.status_code < 400:
            return response, sent
        data = bytearray()
        async for chunk in response.aiter_bytes():
            data += chunk
        await response.aclose()
        verdict = rejection(response.status_code, data.decode("utf-8", "replace"))
        if verdict is None:
            return _ReadResponse(response, bytes(data)), sent
        body.clear()
        if verdict == "new":
            body.update({**thread.full, "thread": {"type": "create"}})
        else:
            body.update(thread.full)
            thread.threaded = False
            self.threads.turn_off(thread.session_id)
        return await super()._send(client, request, body, options, watch)  # type: ignore[misc]

    def _record(self, thread: _Thread, reply: Any) -> None:
        """A reply from a fallback model (``responseModel``) is not stored by the server."""
        if reply.extra.get("responseModel") is not None:
            return
        from pi_plugins.providers.anthropic import convert_messages

        converted = [m for m in convert_messages(thread.model, [reply], None, thread.oauth)
                     if m["role"] == "assistant"]
        self.threads.record(thread.model, thread.session_id, thread.full, converted, reply.response_id)
