"""What every HTTP streaming provider does the same way, so each wire API only says what
differs: how to build its request (:meth:`SseProvider.build_request`) and how to read its
events (a :class:`StreamReader`).

:meth:`SseProvider.stream` sends the request (through :mod:`pi_plugins.providers.transport`,
imported on first use), follows redirects, reports the response to the harness, turns an
HTTP error into a classified ``error`` event naming the provider, the model and the
server's message, feeds the server-sent events to the reader, and keeps the provider
contract: it never raises for a request or model failure, and an abort (the signal, or
cancelling the task) closes the connection at once and ends the stream with stop reason
``aborted``.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import AsyncIterator, Iterable
from typing import Any, cast

from pi_core.protocol.messages import Failure, StopReason
from pi_core.protocol.model import Model
from pi_core.protocol.provider import LlmContext, StreamOptions
from pi_core.protocol.stream import AssistantMessageEvent
from pi_plugins.providers import slots
from pi_plugins.providers.failures import classify, redact, retry_after_ms, server_message
from pi_plugins.providers.kit import MessageBuilder
from pi_plugins.providers.origins import rewrite as rewrite_origin
from pi_plugins.providers.pool import ClientPool, pool_for, transport
from pi_plugins.providers.request_body import request_content
from pi_plugins.providers.sse import SseDecoder, SseEvent
from pi_plugins.retries.policy import (
    RETRY_STATUSES,
    provider_retries,
    sdk_retry_delay,
    too_long_note,
    waits_too_long,
)

ABORTED = "Request was aborted"
_MAX_ERROR_BODY = 64 * 1024


class StreamError(Exception):
    """The stream reported a failure (an error event, an error stop reason) or broke off."""

    def __init__(self, message: str, failure: Failure | None = None, *, as_said: bool = False):
        super().__init__(message)
        self.message = message
        self.failure = failure or Failure(kind="other")
        #: The server's own words, shown as they are (pi 1.6 shows them so): no model named.
        self.as_said = as_said


def merged_headers(headers: dict) -> dict:
    """Headers as a ``before_provider_headers`` handler left them: names compared without
    case (a later spelling replaces an earlier one), a ``None`` value removing the header."""
    merged: dict = {}
    for name, value in headers.items():
        for earlier in [k for k in merged if k.lower() == name.lower()]:
            del merged[earlier]
        if value is not None:
            merged[name] = value
    return merged


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


#: The decoder's own scanner (an attribute its __init__ sets; typeshed does not list it).
_scan_json = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


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




def stream_event_data(event: Any) -> Any:
    """What ``provider_stream_event`` gets for one wire event: its data as JSON, else its
    text (a decoder's own object as it is)."""
    data = getattr(event, "data", event)
    if not isinstance(data, str):
        return data
    try:
        return json.loads(data)
    except ValueError:
        return data


async def report_stream_event(options: StreamOptions, event: Any, data: Any = stream_event_data) -> None:
    """pi 1.6's ``provider_stream_event`` for one wire event (``data`` makes what the
    handlers get of it); OpenAI's ``[DONE]`` end marker is none (pi's SDK reads it as the
    end, not as an event)."""
    if options.on_stream_event is not None and getattr(event, "data", None) != "[DONE]":
        value = data(event)
        if value is not None:
            await options.on_stream_event(value)


def truncated(what: str) -> StreamError:
    return StreamError(f"Connection lost: the stream ended before {what}", Failure(kind="retryable"))


_URL_VARIABLE = re.compile(r"\{([A-Z][A-Z0-9_]*)\}")


def env_value(options: Any, name: str) -> str | None:
    """A variable as a provider reads it: the stored credential's ``env`` (auth.json,
    pi 1.6) first, then the process environment."""
    return (getattr(options, "env", None) or {}).get(name) or os.environ.get(name)


def environment_url(url: str, options: Any = None) -> str:
    """A catalogue URL's ``{VARIABLE}`` parts from the environment (the credential's
    ``env`` first), as pi fills them (Cloudflare's ``{CLOUDFLARE_ACCOUNT_ID}``); an unset
    one says which to set."""
    if "{" not in url:
        return url

    def value(match: re.Match) -> str:
        found = env_value(options, match[1])
        if not found:
            raise ValueError(f"the base URL {url} needs the environment variable {match[1]}")
        return found
    return _URL_VARIABLE.sub(value, url)


def join_url(base: str, path: str) -> str:
    return base.rstrip("/") + path


def _pool(url: str) -> ClientPool:
    """The pooled clients of this event loop (see :mod:`pi_plugins.providers.pool`),
    one pool for ``https://`` (its CA bundle loaded once and shared by every shard) and
    one for ``http://`` (local servers, no TLS context to load)."""
    secure = url.startswith("https:")
    tls: list = []  # the TLS context, made once and shared by every shard of the pool

    def make_client(connections: int):
        Client, ssl_context = transport()

        if secure and not tls:
            tls.append(ssl_context())
        return Client(connections, tls[0] if secure else None)

    return pool_for(secure, make_client)


async def http_client(url: str):
    """A pooled client for this event loop, closed when the loop shuts down."""
    return await _pool(url).first_client()


#: pi 1.6's default ``httpIdleTimeoutMs``.
DEFAULT_IDLE_TIMEOUT_MS = 300_000


def idle_seconds(idle_timeout_ms: int | None) -> float | None:
    """The transport's read timeout for ``httpIdleTimeoutMs`` (0: none)."""
    if idle_timeout_ms is None:
        idle_timeout_ms = DEFAULT_IDLE_TIMEOUT_MS
    return idle_timeout_ms / 1000 if idle_timeout_ms else None


async def _within(timeout_ms: int | None, sending: Any) -> Any:
    """The response of ``sending``, or httpcore's ``ReadTimeout`` when it takes longer than
    ``timeout_ms`` (the setting ``retry.provider.timeoutMs``: as pi's SDKs time a request,
    until the response starts; a timed-out request is sent again like any transient failure)."""
    if not timeout_ms:
        return await sending
    try:
        return await asyncio.wait_for(sending, timeout_ms / 1000)
    except TimeoutError:
        import httpcore

        raise httpcore.ReadTimeout(f"no response within {timeout_ms} ms (retry.provider.timeoutMs)") from None


def take_back_abort() -> None:
    """The signal aborted the stream by cancelling this task (:class:`AbortWatch`): take
    the cancel back, so the provider can end the answer as aborted."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        task.uncancel()


class AbortWatch:
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

    def decoder(self) -> Any:
        """What turns the response's bytes into events (``feed(bytes)`` and ``close()``,
        each returning :class:`SseEvent` objects): server-sent events, unless the wire
        frames them otherwise (Bedrock's binary event stream)."""
        return SseDecoder()

    def http_error_text(self, where: str, status: int, reason: str, message: str, parsed: Any,
                        text: str = "") -> str:
        """What a failed request's answer says, from its status and error body (``parsed``
        when JSON, ``text`` as it came): the model, the status and the server's message; a
        provider whose pi 1.6 SDK words it otherwise says it that way
        (:mod:`.error_text`)."""
        return f"{where}: {status} {reason}".strip() + f": {message}"

    def finalize(self, request: HttpRequest, body: Any) -> None:
        """The last word on a request, with the body as it will be sent (after the
        ``before_provider_request`` hooks): a provider that signs requests signs here."""

    def stream_event_data(self, event: Any) -> Any:
        """What ``provider_stream_event`` gets of one decoded event (None: nothing)."""
        return stream_event_data(event)

    def content(self, body: Any, headers: dict[str, str]) -> tuple[Any, dict[str, str]]:
        """What a POST sends and with which headers: the body as JSON (Codex compresses it)."""
        return request_content(body, headers)

    async def _send(self, client: Any, request: HttpRequest, body: dict, options: StreamOptions,
                    watch: AbortWatch) -> tuple[Any, int]:
        """POST the request; a 408, 409, 429 or 5xx answer, or a connection that failed,
        is sent again after a short backoff (the server's retry-after when it gives one
        under a minute), as the provider SDKs do, up to ``retry.provider.maxRetries`` (0
        unless set, as in pi 1.6: :func:`pi_plugins.retries.policy.provider_retries`). A
        redirect is followed (:func:`redirect`). Returns the response and the size of
        the body sent."""
        retries = provider_retries(options.max_retries)
        attempt = hops = 0
        url, method, headers = request.url, "POST", request.headers
        while True:
            watch.reading = True
            if method == "POST":
                content, sent_headers = self.content(body, headers)
                sent = int(sent_headers.get("content-length") or len(content))
            else:
                content, sent_headers, sent = None, headers, 0
            try:
                response = await _within(options.timeout_ms, client.send(
                    method, url, content=content, headers=sent_headers,
                    read_timeout=idle_seconds(options.idle_timeout_ms)))
            except Exception as exc:
                kind = transport_kind(exc)
                if kind is None or kind == "invalid" or attempt >= retries:
                    raise
                delay = sdk_retry_delay(attempt, None)
            else:
                watch.response = response
                location = (response.headers.get("location")
                            if response.status_code in REDIRECTS else None)
                if location and hops < MAX_REDIRECTS:
                    hops += 1
                    await _release(response)
                    watch.response = None
                    url, method, headers = redirect(url, response.status_code, location,
                                                    method, headers)
                    url = rewrite_origin(url)
                    client = await http_client(url)
                    continue
                asked = retry_after_ms(response.headers)
                if response.status_code not in RETRY_STATUSES or attempt >= retries \
                        or _header_value(response.headers, "x-should-retry") == "false" \
                        or waits_too_long(asked, options.max_retry_delay_ms):
                    return response, sent
                delay = sdk_retry_delay(attempt, asked)
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
        watch: AbortWatch | None = None
        pool = shard = slot = None
        final: AssistantMessageEvent | None = None  # the done or error event, sent once released
        request, sent = None, 0
        try:
            request = self.build_request(model, context, options)
            request.url = rewrite_origin(environment_url(request.url, options))  # PI_PROVIDER_ORIGINS
            body = await options.prepare_payload(request.body)
            from pi_plugins.providers.identity import with_identity

            request.headers = await with_identity(model, request.headers, options)
            self.finalize(request, body)  # after the headers: a signature covers them
            if signal.aborted:
                raise asyncio.CancelledError
            watch = AbortWatch(signal)
            watch.reading = True  # an abort while waiting for a server's slot ends the wait
            slot = await slots.acquire(model)
            watch.reading = False
            pool = _pool(request.url)
            shard = await pool.acquire()
            client = shard.client
            response, sent = await self._send(client, request, body, options, watch)
            try:
                await options.response(response.status_code, dict(response.headers))
                if response.status_code >= 300:  # a redirect not followed, too
                    watch.reading = True
                    text = await _read_error_body(response)
                    watch.reading = False
                    message, parsed = server_message(text)
                    failure = classify(
                        response.status_code, message,
                        retry_after_ms(response.headers, parsed, message),
                    )
                    said = self.http_error_text(where, response.status_code, response.reason_phrase,
                                                message, parsed, text)
                    cap = options.max_retry_delay_ms
                    asked = failure.retry_after_ms
                    if failure.kind == "retryable" and asked is not None and waits_too_long(asked, cap):
                        said += too_long_note(asked, cap)
                        failure = Failure(kind="other", status=failure.status,
                                          retry_after_ms=failure.retry_after_ms)
                    final = builder.error(redact(said, key), failure=failure)
                elif not streams(response.headers.get("content-type")):
                    watch.reading = True
                    text = await _read_error_body(response)
                    watch.reading = False
                    status = f"{response.status_code} {response.reason_phrase}".strip()
                    kind = response.headers.get("content-type")
                    final = builder.error(redact(
                        f"{where}: the server answered {status} with {kind}, not an event stream "
                        f"(a captive portal, a proxy's login page or the wrong base URL?); "
                        f"it begins: {text[:200]!r}", key), failure=Failure(kind="other", status=response.status_code))
                else:
                    yield builder.start()
                    reader = self.reader(builder, model, context)
                    decoder = self.decoder()
                    watch.reading = True
                    async for chunk in response.aiter_bytes():
                        watch.reading = False
                        for sse in decoder.feed(chunk):
                            await report_stream_event(options, sse, self.stream_event_data)
                            for event in reader.on_event(sse):
                                if signal.aborted:
                                    raise asyncio.CancelledError
                                yield event
                        if signal.aborted:
                            raise asyncio.CancelledError
                        watch.reading = True
                    watch.reading = False
                    for sse in decoder.close():
                        await report_stream_event(options, sse, self.stream_event_data)
                        for event in reader.on_event(sse):
                            yield event
                    if signal.aborted:
                        raise asyncio.CancelledError
                    for event in reader.end():
                        yield event
                    # the readers map the wire's reasons to pi's stop reasons
                    final = builder.done(cast("StopReason | None", reader.stop_reason))
            finally:
                await _release(response)
        except asyncio.CancelledError:
            if not signal.aborted:
                raise
            take_back_abort()
            final = builder.error(ABORTED, aborted=True)
        except StreamError as exc:
            if signal.aborted:
                final = builder.error(ABORTED, aborted=True)
            else:
                message = exc.message + broken_stream_note(exc.message, request, sent)
                said = message if exc.as_said else f"{where}: {message}"
                final = builder.error(redact(said, key), failure=exc.failure)
        except Exception as exc:  # network trouble, or a bug: never out of the provider
            if signal.aborted:
                final = builder.error(ABORTED, aborted=True)
            else:
                message, failure = describe_exception(exc)
                message += broken_stream_note(message, request, sent)
                final = builder.error(redact(f"{where}: {message}", key), failure=failure)
        finally:
            if watch is not None:
                watch.close()
            if pool is not None and shard is not None:
                pool.release(shard)
            if slot is not None:
                slot.release()
        assert final is not None  # (every way out of the try above sets it)
        yield final


#: Media types a streaming answer may come as: server-sent events, or the JSON of an
#: API that answers a stream request whole. A missing header says nothing wrong.
_STREAM_TYPES = ("text/event-stream", "application/json", "application/x-ndjson",
                 "application/jsonl", "application/stream+json", "application/vnd.amazon.eventstream")


def streams(content_type: str | None) -> bool:
    """Whether a successful answer of this content type can be a stream: not an HTML
    page (a captive portal, a proxy's login page), not plain text."""
    if not content_type:
        return True
    media = content_type.split(";", 1)[0].strip().lower()
    return media in _STREAM_TYPES or media.endswith("+json")


def _header_value(headers: Any, name: str) -> str | None:
    value = headers.get(name) if headers is not None else None
    return value.lower() if isinstance(value, str) else None


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


def broken_stream_note(message: str, request: HttpRequest | None, sent: int) -> str:
    """For a stream that broke off: which request to which server, and where to look.
    A server that drops the connection mid-answer says why only in its own log."""
    if request is None or not sent or not message.startswith("Connection lost"):
        return ""
    body = request.body if isinstance(request.body, dict) else {}
    count = len(body.get("messages") or body.get("contents") or body.get("input") or ())
    note = (f" (POST {request.url}: {count} messages, {sent:,} bytes; the server stopped "
            f"answering mid-stream, its own log or console says why")
    if re.match(r"^https?://(localhost|127\.|\[::1\]|0\.0\.0\.0)", request.url):
        note += ('; a local server that stops a running answer when another request arrives '
                 'logs "Disconnected from client": start llama-cpp-python with '
                 '--interrupt_requests False (see "Local model servers" in docs/configuration.md)')
    return note + ")"


def transport_kind(exc: BaseException) -> str | None:
    """How a request failed on its way: ``connect``, ``timeout``, ``lost`` (the
    connection broke) or ``invalid`` (the URL); None for any other exception. Told by
    httpcore's own exception classes (as httpx, which wraps them, told them apart)."""
    import httpcore

    if isinstance(exc, httpcore.TimeoutException):
        return "timeout"
    if isinstance(exc, httpcore.ConnectError):
        return "connect"
    if isinstance(exc, (httpcore.RemoteProtocolError, httpcore.ReadError, httpcore.WriteError)):
        return "lost"
    if isinstance(exc, httpcore.UnsupportedProtocol):
        return "invalid"
    if isinstance(exc, (httpcore.ProtocolError, httpcore.NetworkError, httpcore.ProxyError)):
        return "connect"
    return None


def describe_exception(exc: BaseException) -> tuple[str, Failure]:
    """A message and classification for an exception raised while talking to a server."""
    detail = str(exc) or type(exc).__name__
    kind = transport_kind(exc)
    if kind == "timeout":
        return f"Request timed out ({type(exc).__name__})", Failure(kind="retryable")
    if kind == "connect":
        return f"Connection error: {detail}", Failure(kind="retryable")
    if kind == "lost":
        return f"Connection lost: {detail}", Failure(kind="retryable")
    if kind == "invalid":
        return f"Invalid base URL: {detail}", Failure(kind="other")
    return f"{type(exc).__name__}: {detail}", Failure(kind="other")


#: The redirects followed, at most this many in a row (as httpx and fetch do).
REDIRECTS = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 20
#: Headers carrying credentials: never sent on to another origin.
_CREDENTIALS = frozenset({"authorization", "x-api-key", "x-goog-api-key", "api-key", "cookie"})


def redirect(url: str, status: int, location: str, method: str,
             headers: dict[str, str]) -> tuple[str, str, dict[str, str]]:
    """Where a redirect sends a request, as fetch and httpx follow one: the URL,
    the method (a 303, and a 301 or 302 after a POST, become a GET without a body) and
    the headers (without the body's, for a GET; without credentials, to another
    origin)."""
    from urllib.parse import urljoin, urlsplit

    target = urljoin(url, location.strip())
    if status == 303 or (status in (301, 302) and method == "POST"):
        method = "GET"
    before, after = urlsplit(url), urlsplit(target)
    same_origin = (before.scheme, before.hostname, before.port) == \
        (after.scheme, after.hostname, after.port)
    dropped = set() if same_origin else set(_CREDENTIALS)
    if method == "GET":
        dropped |= {"content-type", "content-length", "transfer-encoding"}
    return target, method, {k: v for k, v in headers.items() if k.lower() not in dropped}
