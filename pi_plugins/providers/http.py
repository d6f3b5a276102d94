"""What every HTTP streaming provider does the same way, so each wire API only says what
differs: how to build its request (:meth:`SseProvider.build_request`) and how to read its
events (a :class:`StreamReader`).

:meth:`SseProvider.stream` sends the request with httpx (imported on first use, so start-up
stays fast), reports the response to the harness, turns an HTTP error into a classified
``error`` event naming the provider, the model and the server's message, feeds the
server-sent events to the reader, and keeps the provider contract: it never raises for a
request or model failure, and an abort (the signal, or cancelling the task) closes the
connection at once and ends the stream with stop reason ``aborted``.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import weakref
from typing import Any, AsyncIterator, Iterable

from pi_core.messages import Failure
from pi_core.model import Model
from pi_core.provider import LlmContext, StreamOptions
from pi_core.stream import AssistantMessageEvent, MessageBuilder
from pi_plugins.providers.failures import classify, redact, retry_after_ms, server_message
from pi_plugins.providers.sse import SseDecoder, SseEvent

ABORTED = "Request was aborted"
#: Seconds: to connect, and between two reads (reasoning models can be quiet for minutes).
CONNECT_TIMEOUT = 30.0
READ_TIMEOUT = 600.0
_MAX_ERROR_BODY = 64 * 1024
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


class StreamError(Exception):
    """The stream reported a failure (an error event, an error stop reason) or broke off."""

    def __init__(self, message: str, failure: Failure | None = None):
        super().__init__(message)
        self.message = message
        self.failure = failure or Failure(kind="other")


class HttpRequest:
    __slots__ = ("url", "headers", "body")

    def __init__(self, url: str, headers: dict[str, str], body: dict):
        self.url = url
        self.headers = headers
        self.body = body


class StreamReader:
    """Reads one response's events into the builder. Subclasses implement
    :meth:`on_event` and :meth:`end`."""

    def __init__(self, builder: MessageBuilder, model: Model, context: LlmContext):
        self.builder = builder
        self.model = model
        self.context = context
        #: Set by the reader from the wire format's own stop reason.
        self.stop_reason: str | None = None

    def on_event(self, event: SseEvent) -> Iterable[AssistantMessageEvent]:
        raise NotImplementedError

    def end(self) -> Iterable[AssistantMessageEvent]:
        """The stream ended: the end events of open blocks; raise :class:`StreamError`
        when it ended before the response was complete."""
        raise NotImplementedError


_scan_json = json.JSONDecoder().scan_once


def json_data(event: SseEvent) -> Any:
    """The event's data as JSON (the C scanner directly: this runs for every token)."""
    data = event.data
    try:
        value, end = _scan_json(data, 0)
        if end == len(data) or not data[end:].strip():
            return value
    except (StopIteration, ValueError):
        pass
    try:
        return json.loads(data)
    except ValueError:
        raise StreamError(
            f"the server sent data that is not JSON: {event.data[:200]!r}",
            Failure(kind="other"),
        ) from None


def truncated(what: str) -> StreamError:
    return StreamError(f"Connection lost: the stream ended before {what}", Failure(kind="retryable"))


def join_url(base: str, path: str) -> str:
    return base.rstrip("/") + path


def encode_json(body: Any) -> bytes:
    """The request body as UTF-8 JSON; lone surrogates (invalid in UTF-8, rejected by
    every API) are dropped."""
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("", text).encode("utf-8")


_clients: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict]" = weakref.WeakKeyDictionary()


def _httpx():
    """httpx, without its own command line: when rich and click are installed (they are,
    for the interactive mode) ``import httpx`` also loads ``httpx._main`` and through it
    rich and pygments, about 0.1 s of every ``pi -p`` for a tool we never run. httpx
    supports that module being unavailable (it then provides a stub ``main``)."""
    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", None)
    import httpx

    return httpx


async def http_client(url: str):
    """A pooled client for this event loop; plain-http URLs (local servers) get one that
    skips loading the CA bundle, which costs a noticeable part of a one-shot run.

    The client is closed when the loop shuts down (``asyncio.run`` closes the async
    generators it knows, and one of them holds the client), so no connection is left open."""
    httpx = _httpx()
    loop = asyncio.get_running_loop()
    per_loop = _clients.setdefault(loop, {})
    secure = url.startswith("https:")
    held = per_loop.get(secure)
    if held is None or held[0].is_closed:
        client = httpx.AsyncClient(
            timeout=httpx.Timeout(READ_TIMEOUT, connect=CONNECT_TIMEOUT),
            verify=True if secure else False,
            follow_redirects=True,
        )
        keeper = _keep_until_shutdown(client)
        await keeper.__anext__()
        held = per_loop[secure] = (client, keeper)
    return held[0]


async def _keep_until_shutdown(client: Any):
    try:
        yield
        await asyncio.Event().wait()  # resumed only by the loop's shutdown (aclose)
    finally:
        await client.aclose()


class _AbortWatch:
    """Turns the abort signal into closing the connection at once: while the stream
    awaits the network the task is cancelled; while it is suspended at a ``yield`` the
    response is closed, so the next read ends it."""

    def __init__(self, signal: Any):
        self.signal = signal
        self.task = asyncio.current_task()
        self.loop = asyncio.get_running_loop()
        self.reading = False
        self.response: Any = None
        self.active = True
        self._remove = signal.on_abort(self._on_abort)

    def _on_abort(self) -> None:
        try:
            self.loop.call_soon_threadsafe(self._react)
        except RuntimeError:  # the loop is closed: nothing left to interrupt
            pass

    def _react(self) -> None:
        if not self.active or self.task is None:
            return
        if self.reading:
            if self.task.cancelling() == 0:  # the harness may have cancelled it already
                self.task.cancel(ABORTED)
        elif self.response is not None:
            asyncio.ensure_future(self.response.aclose())

    def close(self) -> None:
        self.active = False
        self._remove()


class SseProvider:
    """A wire API spoken over HTTP POST with a server-sent-events response."""

    api = ""

    def build_request(self, model: Model, context: LlmContext, options: StreamOptions) -> HttpRequest:
        raise NotImplementedError

    def reader(self, builder: MessageBuilder, model: Model, context: LlmContext) -> StreamReader:
        raise NotImplementedError

    #: Retries of a transient failure inside the provider, before the harness sees it
    #: (the setting ``retry.provider.maxRetries`` overrides it): pi's OpenAI and
    #: Anthropic SDKs retry twice, its Google SDK not at all.
    default_max_retries = 2

    async def _send(self, client: Any, request: HttpRequest, body: dict, options: StreamOptions,
                    watch: "_AbortWatch") -> Any:
        """POST the request; a 408, 409, 429 or 5xx answer, or a connection that failed,
        is sent again after a short backoff (the server's retry-after when it gives one
        under a minute), as the provider SDKs do, up to the provider's retry count."""
        httpx = _httpx()
        retries = options.max_retries if options.max_retries is not None else self.default_max_retries
        attempt = 0
        while True:
            watch.reading = True
            try:
                response = await client.send(
                    client.build_request("POST", request.url, content=encode_json(body),
                                         headers=request.headers),
                    stream=True,
                )
            except httpx.TransportError as exc:
                if attempt >= retries or isinstance(exc, (httpx.InvalidURL, httpx.UnsupportedProtocol)):
                    raise
                delay = sdk_retry_delay(attempt, None)
            else:
                watch.response = response
                if response.status_code not in RETRY_STATUSES or attempt >= retries \
                        or _header_value(response.headers, "x-should-retry") == "false":
                    return response
                delay = sdk_retry_delay(attempt, response.headers)
                await _release(response)
                watch.response = None
            finally:
                watch.reading = False
            attempt += 1
            watch.reading = True  # an abort while waiting cancels the wait
            await asyncio.sleep(delay)
            watch.reading = False

    def __repr__(self) -> str:
        return f"<{type(self).__name__} api={self.api!r}>"

    async def stream(
        self, model: Model, context: LlmContext, options: StreamOptions
    ) -> AsyncIterator[AssistantMessageEvent]:
        builder = MessageBuilder(api=model.api, provider=model.provider, model=model.id)
        signal = options.signal
        key = options.api_key
        where = f"{model.provider}/{model.id}"
        if signal.aborted:
            yield builder.error(ABORTED, aborted=True)
            return
        watch: _AbortWatch | None = None
        final = None  # the done or error event, sent once the connection is released
        try:
            request = self.build_request(model, context, options)
            body = await options.prepare_payload(request.body)
            if signal.aborted:
                raise asyncio.CancelledError
            client = await http_client(request.url)
            watch = _AbortWatch(signal)
            response = await self._send(client, request, body, options, watch)
            try:
                await options.response(response.status_code, dict(response.headers))
                if response.status_code >= 400:
                    watch.reading = True
                    text = await _read_error_body(response)
                    watch.reading = False
                    message, parsed = server_message(text)
                    failure = classify(
                        response.status_code, message,
                        retry_after_ms(response.headers, parsed, message),
                    )
                    status = f"{response.status_code} {response.reason_phrase}".strip()
                    final = builder.error(redact(f"{where}: {status}: {message}", key), failure=failure)
                else:
                    yield builder.start()
                    reader = self.reader(builder, model, context)
                    decoder = SseDecoder()
                    watch.reading = True
                    async for chunk in response.aiter_bytes():
                        watch.reading = False
                        for sse in decoder.feed(chunk):
                            for event in reader.on_event(sse):
                                if signal.aborted:
                                    raise asyncio.CancelledError
                                yield event
                        if signal.aborted:
                            raise asyncio.CancelledError
                        watch.reading = True
                    watch.reading = False
                    for sse in decoder.close():
                        for event in reader.on_event(sse):
                            yield event
                    if signal.aborted:
                        raise asyncio.CancelledError
                    for event in reader.end():
                        yield event
                    final = builder.done(reader.stop_reason)
            finally:
                await _release(response)
        except asyncio.CancelledError:
            if not signal.aborted:
                raise
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                task.uncancel()
            final = builder.error(ABORTED, aborted=True)
        except StreamError as exc:
            if signal.aborted:
                final = builder.error(ABORTED, aborted=True)
            else:
                final = builder.error(redact(f"{where}: {exc.message}", key), failure=exc.failure)
        except Exception as exc:  # network trouble, or a bug: never out of the provider
            if signal.aborted:
                final = builder.error(ABORTED, aborted=True)
            else:
                message, failure = describe_exception(exc)
                final = builder.error(redact(f"{where}: {message}", key), failure=failure)
        finally:
            if watch is not None:
                watch.close()
        yield final


#: The statuses the provider SDKs send again.
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504}) | frozenset(range(505, 600))


def _header_value(headers: Any, name: str) -> str | None:
    value = headers.get(name) if headers is not None else None
    return value.lower() if isinstance(value, str) else None


def sdk_retry_delay(attempt: int, headers: Any) -> float:
    """Seconds before retry ``attempt + 1``: the server's ``retry-after-ms`` or
    ``retry-after`` when under a minute, else 0.5 s doubling up to 8 s, less up to a
    quarter at random (the OpenAI and Anthropic SDKs' backoff)."""
    import random

    asked = retry_after_ms(headers) if headers is not None else None
    if asked is not None and 0 < asked <= 60_000:
        return asked / 1000
    return min(0.5 * 2 ** attempt, 8.0) * (1 - random.random() * 0.25)


async def _release(response: Any) -> None:
    """Close the response (and so, unless it was read to the end, the connection). The
    close runs in its own task: a cancellation arriving now (an abort) must not leave the
    connection open."""
    if response.is_closed:
        return
    await asyncio.shield(asyncio.ensure_future(response.aclose()))


async def _read_error_body(response: Any) -> str:
    data = bytearray()
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) >= _MAX_ERROR_BODY:
            break
    return data.decode("utf-8", "replace")


def describe_exception(exc: BaseException) -> tuple[str, Failure]:
    """A message and classification for an exception raised while talking to a server."""
    httpx = _httpx()

    detail = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.TimeoutException):
        return f"Request timed out ({type(exc).__name__})", Failure(kind="retryable")
    if isinstance(exc, httpx.ConnectError):
        return f"Connection error: {detail}", Failure(kind="retryable")
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError,
                        httpx.CloseError, httpx.StreamClosed)):
        return f"Connection lost: {detail}", Failure(kind="retryable")
    if isinstance(exc, (httpx.InvalidURL, httpx.UnsupportedProtocol)):
        return f"Invalid base URL: {detail}", Failure(kind="other")
    if isinstance(exc, httpx.TransportError):
        return f"Connection error: {detail}", Failure(kind="retryable")
    return f"{type(exc).__name__}: {detail}", Failure(kind="other")
