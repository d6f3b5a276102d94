"""A scripted LLM server on 127.0.0.1 for tests and benchmarks: a real HTTP server in a
thread that speaks the streaming endpoints of all four wire APIs and replays a script.

::

    with LlmServer() as server:                       # or the ``llm_server`` fixture
        server.push(Reply(text="Hello!"), Reply(tool_calls=[("read", {"path": "a"})]))
        model = server.model("anthropic-messages")    # a Model pointing at the server
        ...                                           # or write server.models_json(...)
        server.requests[0].body                       # every request, recorded

Each request takes the next :class:`Reply` (a function of the :class:`Request` may stand
in for one) and streams it in the wire format of the endpoint it came to:

=============================================  ======================
``POST /v1/chat/completions``                  openai-completions
``POST /v1/responses``                         openai-responses
``POST /v1/messages``                          anthropic-messages
``POST /v1beta/models/{id}:streamGenerateContent``  google-generative-ai
=============================================  ======================

A reply can also fail: an HTTP error with the API's own error body and headers
(``status``, ``error``, ``headers={"retry-after": "2"}``), an error event inside the
stream (``error`` with status 200), a connection dropped after some events
(``disconnect_after``), a stream that ends early (``truncate_after``), garbage bytes, or
any body under another content type (``raw`` with ``content_type="text/html"``).
The bytes can be written in pieces (``chunk_size``, or ``random_chunks=seed`` for random
sizes down to one byte) with a ``delay`` between writes; a client that goes away is
noticed and recorded in ``disconnects``. A reply can also stop after ``hold_after``
writes until the test sets its ``hold`` event, so "while the answer streams" is a state
the test controls rather than a race against a timed stream.
"""

from __future__ import annotations

import json
import random
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qs, urlsplit

COMPLETIONS = "openai-completions"
RESPONSES = "openai-responses"
ANTHROPIC = "anthropic-messages"
GOOGLE = "google-generative-ai"
APIS = (COMPLETIONS, RESPONSES, ANTHROPIC, GOOGLE)
#: APIs served by one of the four formats above at their own path.
CODEX = "openai-codex-responses"  # ChatGPT's backend: Responses at /backend-api/codex/responses
MISTRAL = "mistral-conversations"  # Mistral's API: Chat Completions at /v1/chat/completions
AZURE = "azure-openai-responses"  # an Azure resource: Responses at /openai/v1/responses
VERTEX = "google-vertex"  # Vertex AI: Gemini at /v1/.../publishers/google/models/{id}:streamGenerateContent
BEDROCK = "bedrock-converse-stream"  # Bedrock's Converse stream: AWS's binary event-stream frames


@dataclass
class Reply:
    """One scripted response. Text, thinking and tool-call arguments given as a string
    are streamed in ``delta_size``-character deltas; a list gives the deltas exactly."""

    text: str | list[str] | None = None
    thinking: str | list[str] | None = None
    thinking_signature: str = "c2lnbmF0dXJl"
    #: (name, arguments) or (name, arguments, id); arguments: a dict or raw JSON text
    tool_calls: list[tuple] = field(default_factory=list)
    #: {"input", "output", "cache_read", "cache_write", "reasoning"} token counts
    usage: dict[str, int] | None = None
    #: False: send no usage at all (llama-cpp-python ignores ``stream_options``).
    send_usage: bool = True
    #: The API's own stop reason to send (e.g. "length", "max_tokens", "MAX_TOKENS").
    stop: str | None = None
    response_id: str | None = None
    delta_size: int = 8
    # -- failures
    status: int = 200
    #: With a status >= 400, the error body's message (``raw``, JSON text, replaces the whole
    #: body); with 200, an error event in the stream.
    error: str | None = None
    #: The error's type or code (e.g. "rate_limit_error", "overloaded_error").
    error_type: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    #: Close the connection abruptly after this many events (no proper end).
    disconnect_after: int | None = None
    #: End the response cleanly after this many events, before the stream's last event.
    truncate_after: int | None = None
    #: Send these bytes as the body of a 200 ``text/event-stream`` response.
    garbage: bytes | None = None
    #: Exact event-stream text to send instead of rendering the reply.
    raw: str | None = None
    #: The content type of a 200 answer (``text/html`` for a captive portal's page).
    content_type: str = "text/event-stream"
    # -- transport
    chunk_size: int | None = None
    random_chunks: int | None = None
    delay: float = 0.0
    #: Stop after ``hold_after`` writes until this is set (the server's stop sets it too).
    hold: threading.Event | None = None
    hold_after: int = 2


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    raw: bytes
    api: str | None
    #: time.monotonic() when the whole body had arrived
    received: float = 0.0
    #: For a WebSocket frame (method ``WEBSOCKET``): the number of its connection.
    connection: int = 0

    @property
    def model(self) -> str | None:
        if self.api == GOOGLE:
            return self.path.rsplit("/", 1)[-1].split(":")[0]
        return self.body.get("model") if isinstance(self.body, dict) else None


Script = Reply | Callable[[Request], Reply]


def _unzstd(raw: bytes) -> bytes:
    """A zstd body's bytes (the client's own frame: its size may be unstated, so streamed)."""
    try:
        from compression import zstd  # type: ignore[import-not-found]  # Python 3.14+

        return zstd.decompress(raw)
    except ImportError:
        import zstandard

        return zstandard.ZstdDecompressor().decompressobj().decompress(raw)


def api_of(path: str) -> str | None:
    if path.endswith("/chat/completions"):
        return COMPLETIONS
    if path.endswith("/responses"):
        return RESPONSES
    if path.endswith("/messages"):
        return ANTHROPIC
    if ":streamGenerateContent" in path or ":generateContent" in path:
        return GOOGLE
    if path.endswith("/converse-stream"):
        return BEDROCK
    return None


class LlmServer:
    def __init__(self) -> None:
        self.replies: deque[Script] = deque()
        #: False: keep only the raw body (a benchmark's huge bodies need no parsing).
        self.parse_bodies = True
        #: False: read bodies into one reused buffer and keep only their size (a
        #: benchmark's 44 MB body: making it a bytes object is the server's time).
        self.keep_bodies = True
        #: Used when the script is empty (``None``: answer 500 "no scripted reply left").
        self.default: Script | None = None
        self.requests: list[Request] = []
        #: (request number, seconds since the request arrived) of each client that left
        #: while a reply was still being written.
        self.disconnects: list[tuple[int, float]] = []
        self._lock = threading.Lock()
        #: Notified when a request or a disconnect is recorded.
        self._changed = threading.Condition(self._lock)
        self._holds: list[threading.Event] = []
        self._counter = 0
        self._http: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        #: True: ChatGPT's backend also takes WebSockets at ``/backend-api/codex/responses``
        #: (each ``response.create`` frame is a request, method ``WEBSOCKET``, answered
        #: with the next reply's Responses events as text frames); False: the upgrade gets
        #: a 404, as from a server without them.
        self.websocket = False
        #: The WebSocket handshakes: (connection number, headers), and connections closed.
        self.handshakes: list[tuple[int, dict[str, str]]] = []
        self.websocket_closes: list[int] = []
        #: The connection number of each reply written whole over a WebSocket.
        self.websocket_answers: list[int] = []
        #: {path: JSON body} answered to a POST there with 200 (a token endpoint beside
        #: the model's, as Anthropic's ``/v1/oauth/token``); the request is recorded.
        self.json_routes: dict[str, dict] = {}

    # ------------------------------------------------------------ lifecycle

    def start(self) -> "LlmServer":
        handler = type("Handler", (_Handler,), {"owner": self})
        self._http = _Server(("127.0.0.1", 0), handler)
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, args=(0.01,), name="llm-server",
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        with self._lock:
            for hold in self._holds:  # no handler thread is left waiting
                hold.set()
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http = None

    def __enter__(self) -> "LlmServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def url(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host}:{port}"

    def base_url(self, api: str) -> str:
        """The base URL a model of ``api`` uses (what models.json's ``baseUrl`` holds)."""
        return {ANTHROPIC: self.url, GOOGLE: f"{self.url}/v1beta",
                CODEX: f"{self.url}/backend-api", MISTRAL: self.url,
                AZURE: f"{self.url}/openai/v1", VERTEX: self.url, BEDROCK: self.url}.get(api, f"{self.url}/v1")

    # ------------------------------------------------------------ script

    def push(self, *replies: Script) -> None:
        with self._lock:
            self.replies.extend(replies)
            self._holds.extend(r.hold for r in replies if isinstance(r, Reply) and r.hold is not None)

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[Request]:
        with self._changed:
            self._changed.wait_for(lambda: len(self.requests) >= count, timeout)
        return self.requests

    def wait_for_closes(self, count: int, timeout: float = 5.0) -> bool:
        """Wait until ``count`` WebSocket connections have ended."""
        with self._changed:
            return self._changed.wait_for(lambda: len(self.websocket_closes) >= count, timeout)

    def wait_for_disconnect(self, timeout: float = 5.0) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: bool(self.disconnects), timeout)

    def _next(self, request: Request) -> Reply | None:
        with self._lock:
            script = self.replies.popleft() if self.replies else self.default
        if script is None:
            return None
        return script(request) if callable(script) else script

    # ------------------------------------------------------------ helpers for tests

    def model(self, api: str, id: str = "test-model", provider: str | None = None, **fields: Any):
        """A :class:`pi_core.protocol.model.Model` served here."""
        from pi_core.protocol.model import Model

        fields.setdefault("input", ["text", "image"])
        return Model(id=id, provider=provider or f"test-{api}", api=api, name=id,
                     base_url=self.base_url(api), **fields)

    def models_json(self, provider: str = "local", api: str = COMPLETIONS, models: list | None = None,
                    **provider_fields: Any) -> dict:
        """A models.json document with one provider served here (no key needed)."""
        entries = [m if isinstance(m, dict) else {"id": m} for m in (models or ["test-model"])]
        return {"providers": {provider: {"baseUrl": self.base_url(api), "api": api,
                                         "models": entries, **provider_fields}}}


# ---------------------------------------------------------------- rendering


def _deltas(value: str | list[str] | None, size: int) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return value
    size = max(1, size)
    return [value[i:i + size] for i in range(0, len(value), size)] or [""]


def _calls(reply: Reply, default_prefix: str) -> list[tuple[str, str, str]]:
    calls = []
    for n, call in enumerate(reply.tool_calls, start=1):
        name, arguments = call[0], call[1]
        call_id = call[2] if len(call) > 2 else f"{default_prefix}{n:04d}"
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        calls.append((name, raw, call_id))
    return calls


def _usage(reply: Reply) -> dict[str, int]:
    usage = {"input": 10, "output": 5, "cache_read": 0, "cache_write": 0, "reasoning": 0}
    usage.update(reply.usage or {})
    return usage


def _sse(data: Any, event: str | None = None, newline: str = "\n") -> str:
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    head = f"event: {event}{newline}" if event else ""
    return f"{head}data: {text}{newline}{newline}"


def render(api: str, reply: Reply, model: str, number: int) -> list[str]:
    """The event-stream text of ``reply`` in ``api``'s wire format, event by event."""
    return {COMPLETIONS: _completions, RESPONSES: _responses, ANTHROPIC: _anthropic, GOOGLE: _google,
            BEDROCK: _bedrock}[api](reply, model, number)


def event_frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One frame of AWS's event stream: prelude (total and headers length, CRC), string
    headers, payload, CRC of it all."""
    import struct
    import zlib

    head = b"".join(struct.pack("B", len(k)) + k.encode() + b"\x07" + struct.pack(">H", len(v)) + v.encode()
                    for k, v in headers.items())
    prelude = struct.pack(">II", 12 + len(head) + len(payload) + 4, len(head))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + head + payload
    return message + struct.pack(">I", zlib.crc32(message))


def _bedrock(reply: Reply, model: str, number: int) -> list[str]:
    """Frames as latin-1 text (the server writes them back as the same bytes)."""
    frames: list[str] = []

    def ev(kind: str, data: dict) -> None:
        frames.append(event_frame({":event-type": kind, ":content-type": "application/json",
                                   ":message-type": "event"}, json.dumps(data).encode()).decode("latin-1"))

    ev("messageStart", {"role": "assistant"})
    index = 0
    if reply.thinking is not None:
        for d in _deltas(reply.thinking, reply.delta_size):
            ev("contentBlockDelta", {"contentBlockIndex": index, "delta": {"reasoningContent": {"text": d}}})
        ev("contentBlockDelta", {"contentBlockIndex": index,
                                 "delta": {"reasoningContent": {"signature": reply.thinking_signature}}})
        ev("contentBlockStop", {"contentBlockIndex": index})
        index += 1
    if reply.text is not None:
        for d in _deltas(reply.text, reply.delta_size):
            ev("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": d}})
        ev("contentBlockStop", {"contentBlockIndex": index})
        index += 1
    calls = _calls(reply, "tooluse_")
    for name, raw, call_id in calls:
        ev("contentBlockStart", {"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": call_id, "name": name}}})
        for piece in _deltas(raw, reply.delta_size):
            ev("contentBlockDelta", {"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}})
        ev("contentBlockStop", {"contentBlockIndex": index})
        index += 1
    if reply.error:
        frames.append(event_frame({":exception-type": reply.error_type or "modelStreamErrorException",
                                   ":content-type": "application/json", ":message-type": "exception"},
                                  json.dumps({"message": reply.error}).encode()).decode("latin-1"))
        return frames
    ev("messageStop", {"stopReason": reply.stop or ("tool_use" if calls else "end_turn")})
    u = _usage(reply)
    ev("metadata", {"usage": {"inputTokens": u["input"], "outputTokens": u["output"],
                              "cacheReadInputTokens": u["cache_read"], "cacheWriteInputTokens": u["cache_write"],
                              "totalTokens": u["input"] + u["output"] + u["cache_read"] + u["cache_write"]},
                    "metrics": {"latencyMs": 1}})
    return frames


def _completions(reply: Reply, model: str, number: int) -> list[str]:
    rid = reply.response_id or f"chatcmpl-test{number:04d}"

    def chunk(delta: dict, finish: str | None = None, **extra: Any) -> str:
        return _sse({"id": rid, "object": "chat.completion.chunk", "created": 1700000000, "model": model,
                     "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra})

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"reasoning_content": d}) for d in _deltas(reply.thinking, reply.delta_size)]
    events += [chunk({"content": d}) for d in _deltas(reply.text, reply.delta_size)]
    calls = _calls(reply, "call_")
    for index, (name, raw, call_id) in enumerate(calls):
        events.append(chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                             "function": {"name": name, "arguments": ""}}]}))
        for piece in _deltas(raw, reply.delta_size):
            events.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    if reply.error:
        events.append(_sse({"error": {"message": reply.error, "type": reply.error_type or "server_error",
                                      "code": reply.error_type}}))
        return events
    events.append(chunk({}, reply.stop or ("tool_calls" if calls else "stop")))
    if not reply.send_usage:
        return events + [_sse("[DONE]")]
    u = _usage(reply)
    events.append(_sse({"id": rid, "object": "chat.completion.chunk", "created": 1700000000, "model": model,
                        "choices": [], "usage": {
                            "prompt_tokens": u["input"] + u["cache_read"] + u["cache_write"],
                            "completion_tokens": u["output"],
                            "total_tokens": u["input"] + u["cache_read"] + u["cache_write"] + u["output"],
                            "prompt_tokens_details": {"cached_tokens": u["cache_read"] + u["cache_write"],
                                                      "cache_write_tokens": u["cache_write"]},
                            "completion_tokens_details": {"reasoning_tokens": u["reasoning"]}}}))
    events.append(_sse("[DONE]"))
    return events


def _responses(reply: Reply, model: str, number: int) -> list[str]:
    rid = reply.response_id or f"resp_test{number:04d}"
    tag = rid.removeprefix("resp_")
    events = [_sse({"type": "response.created", "response": {"id": rid, "status": "in_progress", "model": model}},
                   "response.created")]

    def ev(data: dict) -> None:
        events.append(_sse(data, data["type"]))

    out = 0
    if reply.thinking is not None:
        item_id = f"rs_{tag}"
        ev({"type": "response.output_item.added", "output_index": out,
            "item": {"type": "reasoning", "id": item_id, "summary": []}})
        ev({"type": "response.reasoning_summary_part.added", "item_id": item_id, "output_index": out,
            "summary_index": 0, "part": {"type": "summary_text", "text": ""}})
        full = "".join(_deltas(reply.thinking, reply.delta_size))
        for d in _deltas(reply.thinking, reply.delta_size):
            ev({"type": "response.reasoning_summary_text.delta", "item_id": item_id, "output_index": out,
                "summary_index": 0, "delta": d})
        ev({"type": "response.reasoning_summary_text.done", "item_id": item_id, "output_index": out,
            "summary_index": 0, "text": full})
        ev({"type": "response.reasoning_summary_part.done", "item_id": item_id, "output_index": out,
            "summary_index": 0, "part": {"type": "summary_text", "text": full}})
        ev({"type": "response.output_item.done", "output_index": out,
            "item": {"type": "reasoning", "id": item_id, "summary": [{"type": "summary_text", "text": full}],
                     "encrypted_content": reply.thinking_signature}})
        out += 1
    if reply.text is not None:
        item_id = f"msg_{tag}"
        full = "".join(_deltas(reply.text, reply.delta_size))
        ev({"type": "response.output_item.added", "output_index": out,
            "item": {"type": "message", "id": item_id, "status": "in_progress", "role": "assistant", "content": []}})
        ev({"type": "response.content_part.added", "item_id": item_id, "output_index": out, "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []}})
        for d in _deltas(reply.text, reply.delta_size):
            ev({"type": "response.output_text.delta", "item_id": item_id, "output_index": out,
                "content_index": 0, "delta": d})
        ev({"type": "response.output_text.done", "item_id": item_id, "output_index": out, "content_index": 0,
            "text": full})
        ev({"type": "response.content_part.done", "item_id": item_id, "output_index": out, "content_index": 0,
            "part": {"type": "output_text", "text": full, "annotations": []}})
        ev({"type": "response.output_item.done", "output_index": out,
            "item": {"type": "message", "id": item_id, "status": "completed", "role": "assistant",
                     "content": [{"type": "output_text", "text": full, "annotations": []}]}})
        out += 1
    for n, (name, raw, call_id) in enumerate(_calls(reply, "call_"), start=1):
        item_id = f"fc_{tag}_{n}"
        ev({"type": "response.output_item.added", "output_index": out,
            "item": {"type": "function_call", "id": item_id, "call_id": call_id, "name": name,
                     "arguments": "", "status": "in_progress"}})
        for piece in _deltas(raw, reply.delta_size):
            ev({"type": "response.function_call_arguments.delta", "item_id": item_id, "output_index": out,
                "delta": piece})
        ev({"type": "response.function_call_arguments.done", "item_id": item_id, "output_index": out,
            "arguments": raw})
        ev({"type": "response.output_item.done", "output_index": out,
            "item": {"type": "function_call", "id": item_id, "call_id": call_id, "name": name,
                     "arguments": raw, "status": "completed"}})
        out += 1
    if reply.error:
        ev({"type": "response.failed", "response": {"id": rid, "status": "failed", "error": {
            "code": reply.error_type or "server_error", "message": reply.error}}})
        return events
    u = _usage(reply)
    status = "incomplete" if reply.stop in ("length", "incomplete", "max_output_tokens") else "completed"
    details = {"incomplete_details": {"reason": "max_output_tokens"}} if reply.stop == "max_output_tokens" else {}
    ev({"type": "response.completed", "response": {
        "id": rid, "status": status, "model": model, **details,
        "usage": {"input_tokens": u["input"] + u["cache_read"], "output_tokens": u["output"],
                  "total_tokens": u["input"] + u["cache_read"] + u["output"],
                  "input_tokens_details": {"cached_tokens": u["cache_read"]},
                  "output_tokens_details": {"reasoning_tokens": u["reasoning"]}}}})
    return events


def _anthropic(reply: Reply, model: str, number: int) -> list[str]:
    rid = reply.response_id or f"msg_test{number:04d}"
    u = _usage(reply)
    events = [_sse({"type": "message_start", "message": {
        "id": rid, "type": "message", "role": "assistant", "content": [], "model": model,
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": u["input"], "output_tokens": 1, "cache_read_input_tokens": u["cache_read"],
                  "cache_creation_input_tokens": u["cache_write"],
                  **({"cache_creation": {"ephemeral_1h_input_tokens": u["cache_write_1h"],
                                         "ephemeral_5m_input_tokens": u["cache_write"] - u["cache_write_1h"]}}
                     if "cache_write_1h" in u else {})}}}, "message_start"),
        _sse({"type": "ping"}, "ping")]

    def ev(data: dict) -> None:
        events.append(_sse(data, data["type"]))

    index = 0
    if reply.thinking is not None:
        ev({"type": "content_block_start", "index": index,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
        for d in _deltas(reply.thinking, reply.delta_size):
            ev({"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": d}})
        ev({"type": "content_block_delta", "index": index,
            "delta": {"type": "signature_delta", "signature": reply.thinking_signature}})
        ev({"type": "content_block_stop", "index": index})
        index += 1
    if reply.text is not None:
        ev({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}})
        for d in _deltas(reply.text, reply.delta_size):
            ev({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": d}})
        ev({"type": "content_block_stop", "index": index})
        index += 1
    calls = _calls(reply, "toolu_")
    for name, raw, call_id in calls:
        ev({"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}}})
        for piece in _deltas(raw, reply.delta_size):
            ev({"type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": piece}})
        ev({"type": "content_block_stop", "index": index})
        index += 1
    if reply.error:
        events.append(_sse({"type": "error", "error": {"type": reply.error_type or "overloaded_error",
                                                       "message": reply.error}}, "error"))
        return events
    ev({"type": "message_delta", "delta": {"stop_reason": reply.stop or ("tool_use" if calls else "end_turn"),
                                           "stop_sequence": None},
        "usage": {"output_tokens": u["output"], **({"output_tokens_details": {"thinking_tokens": u["reasoning"]}}
                                                   if "reasoning" in (reply.usage or {}) else {})}})
    ev({"type": "message_stop"})
    return events


def _google(reply: Reply, model: str, number: int) -> list[str]:
    rid = reply.response_id or f"gresp{number:04d}"

    def chunk(parts: list | None = None, **extra: Any) -> str:
        candidate: dict[str, Any] = {"content": {"parts": parts or [], "role": "model"}, "index": 0}
        candidate.update(extra.pop("candidate", {}))
        return _sse({"candidates": [candidate], "modelVersion": model, "responseId": rid, **extra}, newline="\r\n")

    events = []
    for n, d in enumerate(_deltas(reply.thinking, reply.delta_size)):
        part = {"text": d, "thought": True}
        if n == 0:
            part["thoughtSignature"] = reply.thinking_signature
        events.append(chunk([part]))
    events += [chunk([{"text": d}]) for d in _deltas(reply.text, reply.delta_size)]
    for call_spec, (name, raw, call_id) in zip(reply.tool_calls, _calls(reply, "")):
        call = {"name": name, "args": json.loads(raw)}
        if len(call_spec) > 2:  # Gemini sends ids only for some models
            call["id"] = call_id
        events.append(chunk([{"functionCall": call}]))
    if reply.error:
        code = {"RESOURCE_EXHAUSTED": 429, "UNAVAILABLE": 503}.get(reply.error_type or "", 500)
        events.append(_sse({"error": {"code": code, "message": reply.error,
                                      "status": reply.error_type or "INTERNAL"}}, newline="\r\n"))
        return events
    u = _usage(reply)
    events.append(chunk([{"text": ""}], candidate={"finishReason": reply.stop or "STOP"}, usageMetadata={
        "promptTokenCount": u["input"] + u["cache_read"], "candidatesTokenCount": u["output"] - u["reasoning"],
        "thoughtsTokenCount": u["reasoning"], "cachedContentTokenCount": u["cache_read"],
        "totalTokenCount": u["input"] + u["cache_read"] + u["output"]}))
    return events


def error_body(api: str | None, reply: Reply) -> dict:
    message = reply.error or f"HTTP {reply.status}"
    if api == ANTHROPIC:
        default = {429: "rate_limit_error", 529: "overloaded_error", 401: "authentication_error"}.get(
            reply.status, "api_error" if reply.status >= 500 else "invalid_request_error")
        return {"type": "error", "error": {"type": reply.error_type or default, "message": message}}
    if api == BEDROCK:
        return {"message": message}
    if api == GOOGLE:
        status = {429: "RESOURCE_EXHAUSTED", 400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED",
                  403: "PERMISSION_DENIED", 404: "NOT_FOUND", 503: "UNAVAILABLE"}.get(reply.status, "INTERNAL")
        return {"error": {"code": reply.status, "message": message, "status": reply.error_type or status}}
    return {"error": {"message": message, "type": reply.error_type or "invalid_request_error",
                      "param": None, "code": reply.error_type}}


# ---------------------------------------------------------------- HTTP


class _Server(ThreadingHTTPServer):
    # socketserver's default backlog of 5 overflows when hundreds of agents connect at
    # once (batches, benchmarks): the kernel then drops connections the client thinks it
    # has, and they fail with "Connection lost".
    request_queue_size = 1024


class _Handler(BaseHTTPRequestHandler):
    owner: LlmServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_GET(self) -> None:
        if (self.owner.websocket and (self.headers.get("upgrade") or "").lower() == "websocket"
                and urlsplit(self.path).path.endswith("/codex/responses")):
            from support.codex_websocket import serve_websocket

            serve_websocket(self)
            return
        self._json(404, {"error": {"message": f"no such endpoint: GET {self.path}"}})

    def _chunked(self) -> bytes:
        data = bytearray()
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                return bytes(data)
            data += self.rfile.read(size)
            self.rfile.readline()

    def do_POST(self) -> None:
        arrived = time.monotonic()
        length = int(self.headers.get("content-length") or 0)
        if "chunked" in (self.headers.get("transfer-encoding") or "").lower():
            raw = self._chunked()  # Mistral's SDK sends its body in chunks
        elif self.owner.keep_bodies:
            raw = self.rfile.read(length) if length else b""
        else:
            raw, buffer, left = b"", memoryview(bytearray(1 << 20)), length
            while left > 0:
                got = self.rfile.readinto(buffer[:min(left, len(buffer))])
                if not got:
                    break
                left -= got
        received = time.monotonic()
        parts = urlsplit(self.path)
        plain = raw  # ``raw`` stays the bytes as sent; the body is read from them plain
        if (self.headers.get("content-encoding") or "").lower() == "zstd":
            plain = _unzstd(raw)  # pi 1.6 (and we) compress Codex's bodies
        try:
            body = json.loads(plain) if plain and self.owner.parse_bodies else None
        except ValueError:
            body = None
        api = api_of(parts.path)
        request = Request("POST", parts.path, parse_qs(parts.query),
                          {k.lower(): v for k, v in self.headers.items()}, body, raw, api,
                          received)
        owner = self.owner
        with owner._changed:
            owner.requests.append(request)
            owner._counter += 1
            number = owner._counter
            owner._changed.notify_all()
        if parts.path in owner.json_routes:
            self._json(200, owner.json_routes[parts.path])
            return
        if api is None:
            self._json(404, {"error": {"message": f"no such endpoint: POST {parts.path}"}})
            return
        reply = owner._next(request)
        if reply is None:
            self._json(500, error_body(api, Reply(status=500, error="llm_server: no scripted reply left")))
            return
        if reply.status >= 300:  # an error, or a redirect (its location in ``headers``)
            body = json.loads(reply.raw) if reply.raw is not None else error_body(api, reply)  # raw: the body as given
            self._json(reply.status, body, reply.headers)
            return
        if reply.garbage is not None:
            pieces = [reply.garbage.decode("latin-1")]
        elif reply.raw is not None:
            pieces = [reply.raw]
        else:
            pieces = render(api, reply, request.model or "test-model", number)
        cut = reply.disconnect_after if reply.disconnect_after is not None else reply.truncate_after
        if cut is not None:
            pieces = pieces[:cut]
        if api == BEDROCK and reply.content_type == "text/event-stream" and reply.raw is None:
            import dataclasses
            reply = dataclasses.replace(reply, content_type="application/vnd.amazon.eventstream")
        self._stream(pieces, reply, number, arrived,
                     garbage=reply.garbage is not None or (api == BEDROCK and reply.raw is None))

    def _json(self, status: int, body: dict, headers: dict | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, pieces: list[str], reply: Reply, number: int, arrived: float, garbage: bool) -> None:
        payload = "".join(pieces).encode("latin-1" if garbage else "utf-8")
        if reply.random_chunks is not None:
            rng = random.Random(reply.random_chunks)
            writes, i = [], 0
            while i < len(payload):
                size = rng.randint(1, 16)
                writes.append(payload[i:i + size])
                i += size
        elif reply.chunk_size:
            writes = [payload[i:i + reply.chunk_size] for i in range(0, len(payload), reply.chunk_size)]
        else:
            writes = [p.encode("latin-1" if garbage else "utf-8") for p in pieces]
        try:
            self.send_response(200)
            self.send_header("content-type", reply.content_type)
            self.send_header("cache-control", "no-cache")
            self.send_header("transfer-encoding", "chunked")
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.flush()
            for written, data in enumerate(writes):
                if reply.hold is not None and written == reply.hold_after:
                    reply.hold.wait(30)
                if reply.delay:
                    time.sleep(reply.delay)
                if data:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                    self.wfile.flush()
            if reply.disconnect_after is not None:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            self.close_connection = True
            with self.owner._changed:
                self.owner.disconnects.append((number, time.monotonic() - arrived))
                self.owner._changed.notify_all()


try:  # the fixture, for conftest files: ``from support.llm_server import llm_server``
    import pytest
except ImportError:  # pragma: no cover - the server is usable without pytest (bench/)
    pytest = None

if pytest is not None:

    @pytest.fixture
    def llm_server():
        """A started :class:`LlmServer`, stopped after the test."""
        with LlmServer() as server:
            yield server
