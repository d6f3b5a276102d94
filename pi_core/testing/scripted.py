"""A provider that replays a script: for tests, benchmarks and demos, with no network.

Each request takes the next :class:`Reply` (or calls a function of the request that
returns one) and streams it as real provider events: thinking, then text, then tool
calls, in ``chunk``-sized deltas, ``delay`` seconds apart. Register it as a plugin
(``plugins.register(ScriptedProvider([...]))``) and use :func:`scripted_model`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from attrs import define, field

from pi_core import hookimpl
from pi_core.protocol.messages import Failure, Usage
from pi_core.protocol.model import Model
from pi_core.protocol.provider import LlmContext, StreamOptions
from pi_plugins.providers.kit import MessageBuilder

API = "scripted"


def scripted_model(id: str = "scripted-model", **kwargs: Any) -> Model:
    return Model(id=id, provider="scripted", api=API, name=id, **kwargs)


@define
class Reply:
    text: str | None = None
    thinking: str | None = None
    #: (name, arguments) pairs; arguments may be a dict or raw JSON text.
    tool_calls: list[tuple[str, Any]] = field(factory=list)
    #: End with an ``error`` event carrying this message instead of ``done``…
    error: str | None = None
    #: …classified like this (retryable, overflow), as a real provider would.
    failure: Failure | None = None
    usage: Usage | None = None
    chunk: int = 4
    delay: float = 0.0


Script = Reply | Callable[[LlmContext], Reply]


class ScriptedProvider:
    api = API

    def __init__(self, script: list[Script] | None = None, *, api: str = API,
                 router: Callable[[LlmContext], Reply | None] | None = None):
        """``router`` sees each request first; a Reply it returns answers that request
        without using up the script (e.g. every summarisation request)."""
        self.api = api
        self.router = router
        self.script: list[Script] = list(script or [])
        self.requests: list[LlmContext] = []
        self.payloads: list[dict] = []
        self._calls = 0

    def add(self, *replies: Script) -> None:
        self.script.extend(replies)

    @hookimpl
    def register_providers(self):
        return [self]

    async def stream(self, model: Model, context: LlmContext, options: StreamOptions):
        self.requests.append(context)
        builder = MessageBuilder(api=model.api, provider=model.provider, model=model.id)
        builder.message.response_id = f"scripted-{len(self.requests):04d}"
        payload = await options.prepare_payload(
            {"model": model.id, "messages": len(context.messages), "tools": [t.name for t in context.tools]}
        )
        self.payloads.append(payload)
        await options.response(200, {"content-type": "text/event-stream"})
        yield builder.start()
        given: Script | None = self.router(context) if self.router is not None else None
        if given is None:
            if not self.script:
                yield builder.error("scripted provider: the script has no reply left")
                return
            given = self.script.pop(0)
        reply = given(context) if callable(given) else given
        signal = options.signal

        async def pieces(text: str, kind: str):
            for i in range(0, len(text), reply.chunk) or [0]:
                if reply.delay:
                    await asyncio.sleep(reply.delay)
                if signal.aborted:
                    raise _Aborted
                if options.on_stream_event is not None:  # the "wire" event: provider_stream_event
                    await options.on_stream_event({"type": kind, "delta": text[i : i + reply.chunk]})
                yield text[i : i + reply.chunk]

        try:
            if reply.thinking is not None:
                yield builder.thinking_start(signature="scripted-signature")
                async for piece in pieces(reply.thinking, "thinking_delta"):
                    yield builder.thinking_delta(piece)
                yield builder.close()
            if reply.text is not None:
                yield builder.text_start()
                async for piece in pieces(reply.text, "text_delta"):
                    yield builder.text_delta(piece)
                yield builder.close()
            for name, arguments in reply.tool_calls:
                self._calls += 1
                raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
                yield builder.toolcall_start(f"call_{self._calls:04d}", name)
                async for piece in pieces(raw, "toolcall_delta"):
                    yield builder.toolcall_delta(piece)
                yield builder.close()
        except _Aborted:
            yield builder.error("Request was aborted", aborted=True)
            return
        if reply.usage is not None:
            builder.message.usage = reply.usage
        if reply.error is not None:
            yield builder.error(reply.error, failure=reply.failure)
        else:
            yield builder.done()


class _Aborted(Exception):
    pass
