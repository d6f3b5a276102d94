"""The OpenTelemetry side of :mod:`pi_plugins.telemetry`: imported only when telemetry is
on. Spans by the GenAI semantic conventions:

* ``invoke_agent``: one prompt's run (``agent_start`` to ``agent_end``);
* ``chat {model}``: one model request (``prepare_request`` to the assistant's
  ``message_end``), with its usage, finish reason and cost;
* ``execute_tool {tool}``: one tool call (``tool_execution_start`` to ``_end``);
* ``compaction`` and ``retry``: a compaction, and a sequence of automatic retries (the
  retried runs are its children).

A run's parent is, in order: the ``execute_tool`` span of the tool that started it (a
subagent, carried by a context variable through the tool's asyncio task), the current
OpenTelemetry span (``pi batch``'s task span), or the ``TRACEPARENT`` of the environment.
Metrics: ``gen_ai.client.token.usage`` and ``gen_ai.client.operation.duration`` of each
request. Content (prompts, answers, tool arguments and results) only with
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``; keys and headers never.
"""

from __future__ import annotations

import atexit
import contextvars
import json
import os
import time
from contextlib import contextmanager
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

#: The ``execute_tool`` span whose tool is running in this asyncio task (and the tasks it
#: starts): a subagent started by the tool parents its run to it.
_tool_span: contextvars.ContextVar = contextvars.ContextVar("pi_telemetry_tool_span", default=None)

_SCOPE = "pi_plugins.telemetry"

#: How long one export may take when no OTEL_EXPORTER_OTLP_*TIMEOUT variable says.
EXPORT_TIMEOUT_S = 2.0


def _timeout(specific: str) -> float | None:
    """None (the exporter reads the variable itself) when a timeout variable is set."""
    if os.environ.get(specific) or os.environ.get("OTEL_EXPORTER_OTLP_TIMEOUT"):
        return None
    return EXPORT_TIMEOUT_S


class _Run:
    __slots__ = ("span", "context", "chat", "chat_started", "chat_attributes", "tools")

    def __init__(self, span):
        self.span = span
        self.context = trace.set_span_in_context(span)  # the parent of its chats and tools
        self.chat = None
        self.chat_started = 0.0
        self.chat_attributes: dict = {}
        self.tools: dict[str, Any] = {}


class Telemetry:
    """One process's tracer and meter, and the open spans of each harness (by its ctx)."""

    def __init__(self, tracer_provider, meter_provider, capture: bool, root_context):
        self.tracer_provider = tracer_provider
        self.meter_provider = meter_provider
        self.tracer = tracer_provider.get_tracer(_SCOPE)
        self.capture = capture
        self.root_context = root_context
        self.runs: dict[int, _Run] = {}
        self.retries: dict[int, Any] = {}
        self.compactions: dict[int, Any] = {}
        #: Each harness's last ended run's span context (a retry hangs under it).
        self.last_runs: dict[int, Any] = {}
        self.token_usage = self.duration = None
        if meter_provider is not None:
            meter = meter_provider.get_meter(_SCOPE)
            self.token_usage = meter.create_histogram(
                "gen_ai.client.token.usage", unit="{token}", description="Tokens used by a request")
            self.duration = meter.create_histogram(
                "gen_ai.client.operation.duration", unit="s", description="How long a request took")
        atexit.register(self.shutdown)

    @classmethod
    def from_environment(cls) -> Telemetry:
        environ = os.environ
        resource = Resource.create()
        if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
            resource = resource.merge(Resource({"service.name": "pi"}))
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        # An unreachable collector must not hold pi up at the end of a run: unless the
        # standard OTEL_EXPORTER_OTLP_*TIMEOUT says otherwise, an export gives up after
        # EXPORT_TIMEOUT_S (the SDK's default is 10 s, retried with backoff).
        traces_timeout = _timeout("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
        tracer_provider = TracerProvider(resource=resource, shutdown_on_exit=False)
        tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(timeout=traces_timeout)))
        meter_provider = None
        if environ.get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
            from opentelemetry.sdk.metrics import MeterProvider
            from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader

            exporter = OTLPMetricExporter(timeout=_timeout("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT"))
            reader = PeriodicExportingMetricReader(exporter)
            meter_provider = MeterProvider(resource=resource, metric_readers=[reader], shutdown_on_exit=False)
        capture = environ.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "").strip().lower() == "true"
        root = None
        if environ.get("TRACEPARENT"):
            carrier = {"traceparent": environ["TRACEPARENT"], "tracestate": environ.get("TRACESTATE", "")}
            root = TraceContextTextMapPropagator().extract(carrier)
        return cls(tracer_provider, meter_provider, capture, root)

    # ------------------------------------------------------------ export

    def flush(self) -> None:
        timeout = int(EXPORT_TIMEOUT_S * 1000)
        self.tracer_provider.force_flush(timeout_millis=timeout)
        if self.meter_provider is not None:
            self.meter_provider.force_flush(timeout_millis=timeout)

    def forget(self, ctx):
        """The harness is leaving its session: drop what is kept of it; returns the flush."""
        self.last_runs.pop(id(ctx), None)
        return self.flush

    def shutdown(self) -> None:
        atexit.unregister(self.shutdown)
        self.tracer_provider.shutdown()
        if self.meter_provider is not None:
            self.meter_provider.shutdown()

    # ------------------------------------------------------------ parents

    def _outer(self):
        """The context a new top-level span starts in."""
        tool = _tool_span.get()
        if tool is not None and tool.is_recording():
            return trace.set_span_in_context(tool)
        if trace.get_current_span().get_span_context().is_valid:  # a work span, or a joined one
            return otel_context.get_current()
        return self.root_context

    def _inside(self, key: int):
        """The context of a harness's open run (or retry), else the outer one."""
        run = self.runs.get(key)
        if run is not None:
            return trace.set_span_in_context(run.span)
        retry = self.retries.get(key)
        if retry is not None:
            return trace.set_span_in_context(retry)
        return self._outer()

    # ------------------------------------------------------------ runs

    def agent_start(self, ctx) -> None:
        key = id(ctx)
        retry = self.retries.get(key)
        if retry is not None:
            parent = trace.set_span_in_context(retry)
        else:
            parent = self._outer()
        span = self.tracer.start_span("invoke_agent", context=parent, kind=SpanKind.INTERNAL,
                                      attributes={"gen_ai.operation.name": "invoke_agent",
                                                  "gen_ai.agent.name": "pi"})
        self.runs[key] = _Run(span)

    def agent_end(self, event, ctx) -> None:
        run = self.runs.pop(id(ctx), None)
        if run is None:
            return None
        self.last_runs[id(ctx)] = run.span.get_span_context()
        self._end_chat(run, None)
        for span in run.tools.values():
            span.end()
        messages = list(event.messages or [])
        inputs = outputs = 0
        final = None
        for message in messages:
            if getattr(message, "role", None) == "assistant":
                inputs += message.usage.input
                outputs += message.usage.output
                final = message
        span = run.span
        span.set_attribute("gen_ai.usage.input_tokens", inputs)
        span.set_attribute("gen_ai.usage.output_tokens", outputs)
        if final is not None:
            span.set_attribute("gen_ai.response.finish_reasons", [final.stop_reason])
            if final.stop_reason == "error":
                span.set_status(Status(StatusCode.ERROR, final.error_message or "error"))
        if self.capture:
            users = [_text(m) for m in messages if getattr(m, "role", None) == "user"]
            span.set_attribute("gen_ai.input.messages", json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": t}]} for t in users]))
            if final is not None:
                span.set_attribute("gen_ai.output.messages", _output_json(final))
        span.end()

    def request_start(self, request, ctx) -> None:
        run = self.runs.get(id(ctx))
        if run is None:
            return
        self._end_chat(run, None)
        model = request.model
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": model.provider,
                      "gen_ai.request.model": model.id}
        run.chat = self.tracer.start_span(f"chat {model.id}", context=run.context,
                                          kind=SpanKind.CLIENT, attributes=attributes)
        run.chat_started = time.perf_counter()
        run.chat_attributes = attributes

    def request_end(self, message, ctx) -> None:
        run = self.runs.get(id(ctx))
        if run is not None and run.chat is not None:
            self._end_chat(run, message)

    def _end_chat(self, run: _Run, message) -> None:
        span = run.chat
        if span is None:
            return
        run.chat = None
        elapsed = time.perf_counter() - run.chat_started
        metric = dict(run.chat_attributes)
        if message is None:
            span.set_status(Status(StatusCode.ERROR, "no answer"))
            metric["error.type"] = "no_answer"
        else:
            usage = message.usage
            attributes = {"gen_ai.usage.input_tokens": usage.input, "gen_ai.usage.output_tokens": usage.output,
                          "pi.usage.cost_usd": float(usage.cost.total),
                          "gen_ai.response.finish_reasons": (message.stop_reason,)}
            if message.model:
                attributes["gen_ai.response.model"] = metric["gen_ai.response.model"] = message.model
            if message.response_id:
                attributes["gen_ai.response.id"] = message.response_id
            if usage.cache_read:
                attributes["gen_ai.usage.cache_read.input_tokens"] = usage.cache_read
            if usage.cache_write:
                attributes["gen_ai.usage.cache_creation.input_tokens"] = usage.cache_write
            span.set_attributes(attributes)
            if message.stop_reason == "error":
                span.set_status(Status(StatusCode.ERROR, message.error_message or "error"))
                span.set_attribute("error.type", "error")
                metric["error.type"] = "error"
            if self.capture:
                span.set_attribute("gen_ai.output.messages", _output_json(message))
            if self.token_usage is not None:
                self.token_usage.record(usage.input, {**metric, "gen_ai.token.type": "input"})
                self.token_usage.record(usage.output, {**metric, "gen_ai.token.type": "output"})
        if self.duration is not None:
            self.duration.record(elapsed, metric)
        span.end()

    # ------------------------------------------------------------ tools

    def tool_start(self, event, ctx) -> None:
        run = self.runs.get(id(ctx))
        if run is None:
            return
        attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": event.tool_name,
                      "gen_ai.tool.call.id": event.tool_call_id, "gen_ai.tool.type": "function"}
        if self.capture:
            attributes["gen_ai.tool.call.arguments"] = _json(event.args)
        span = self.tracer.start_span(f"execute_tool {event.tool_name}",
                                      context=run.context, kind=SpanKind.INTERNAL, attributes=attributes)
        run.tools[event.tool_call_id] = span
        _tool_span.set(span)  # the loop starts the tool's task next: it inherits this

    def tool_end(self, event, ctx) -> None:
        run = self.runs.get(id(ctx))
        span = run.tools.pop(event.tool_call_id, None) if run is not None else None
        if span is None:
            return
        if event.is_error:
            span.set_status(Status(StatusCode.ERROR, "the tool failed"))
            span.set_attribute("error.type", "tool_error")
        if self.capture:
            span.set_attribute("gen_ai.tool.call.result", _result_text(event.result))
        span.end()

    # ------------------------------------------------------------ compaction, retries

    def compaction_start(self, event, ctx) -> None:
        key = id(ctx)
        old = self.compactions.pop(key, None)
        if old is not None:
            old.end()
        self.compactions[key] = self.tracer.start_span(
            "compaction", context=self._inside(key), attributes={"pi.compaction.reason": event.reason})

    def compaction_end(self, event, ctx) -> None:
        span = self.compactions.pop(id(ctx), None)
        if span is None:
            return
        if event.result is not None:
            span.set_attribute("pi.compaction.tokens_before", int(event.result.tokens_before or 0))
        span.set_attribute("pi.compaction.aborted", bool(event.aborted))
        if event.error_message:
            span.set_status(Status(StatusCode.ERROR, event.error_message))
        span.end()

    def retry_start(self, event, ctx) -> None:
        key = id(ctx)
        span = self.retries.get(key)
        if span is None:  # the failed run has ended: the retry hangs under it
            last = self.last_runs.get(key)
            parent = trace.set_span_in_context(trace.NonRecordingSpan(last)) if last else self._inside(key)
            span = self.tracer.start_span("retry", context=parent)
            self.retries[key] = span
        span.set_attribute("pi.retry.attempt", int(event.attempt))
        span.set_attribute("pi.retry.max_attempts", int(event.max_attempts))
        span.add_event("retry", {"attempt": int(event.attempt), "delay_ms": int(event.delay_ms)})

    def retry_end(self, event, ctx):
        span = self.retries.pop(id(ctx), None)
        if span is None:
            return
        span.set_attribute("pi.retry.success", bool(event.success))
        span.set_attribute("pi.retry.attempt", int(event.attempt))
        if not event.success:
            span.set_status(Status(StatusCode.ERROR, event.final_error or "retries exhausted"))
        span.end()
        return None if id(ctx) in self.runs else self.flush

    # ------------------------------------------------------------ work

    def carrier(self) -> dict:
        carrier: dict = {}
        TraceContextTextMapPropagator().inject(carrier)
        return carrier

    @contextmanager
    def joined(self, carrier: dict):
        token = otel_context.attach(TraceContextTextMapPropagator().extract(carrier))
        try:
            yield
        finally:
            otel_context.detach(token)

    @contextmanager
    def work_span(self, name: str, attributes: dict):
        parent = self._outer()
        outermost = not trace.get_current_span().is_recording()
        with self.tracer.start_as_current_span(name, context=parent, attributes=attributes):
            yield
        if outermost:
            self.flush()


def _text(message) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    return "".join(getattr(c, "text", "") or "" for c in content)


def _output_json(message) -> str:
    parts: list[dict] = []
    for block in message.content:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append({"type": "text", "content": block.text})
        elif kind == "toolCall":
            parts.append({"type": "tool_call", "id": block.id, "name": block.name, "arguments": block.arguments})
    return json.dumps([{"role": "assistant", "parts": parts, "finish_reason": message.stop_reason}],
                      default=str, ensure_ascii=False)


def _json(value: Any) -> str:
    try:
        return json.dumps(value, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _result_text(result: Any) -> str:
    content = getattr(result, "content", None)
    if isinstance(content, list):
        return "".join(getattr(c, "text", "") or "" for c in content)
    return str(result)
