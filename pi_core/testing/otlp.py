"""A local OTLP/HTTP receiver for tests and for looking at pi's telemetry: a real HTTP
server on 127.0.0.1 in a thread that takes ``POST /v1/traces`` and ``/v1/metrics``
(protobuf), decodes them and keeps the spans and metric points.

::

    with OtlpReceiver() as receiver:
        os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.endpoint
        ...                                   # run pi; it flushes at the end of each run
        receiver.spans                        # [Span(name, trace_id, span_id, parent_id, attributes, …)]
        print(receiver.tree())                # the trace tree, indented

``python -m pi_core.testing.otlp [PORT]`` listens on 4318 (OTLP/HTTP's port) and, a
second after spans stop arriving, prints the traces they belong to as trees. Needs the extra ``otel``.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Span:
    name: str
    trace_id: str
    span_id: str
    parent_id: str  # "" for a root
    kind: int
    attributes: dict[str, Any]
    status: int
    start_ns: int
    end_ns: int
    service: str = ""
    events: list[str] = field(default_factory=list)


def _value(any_value) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in any_value.kvlist_value.values}
    return getattr(any_value, kind) if kind else None


class OtlpReceiver:
    def __init__(self, port: int = 0, on_spans=None):
        self.spans: list[Span] = []
        self.metrics: list[tuple[str, dict, Any]] = []  # (name, attributes, point)
        self.bodies: list[bytes] = []  # every request body as received
        self.on_spans = on_spans
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    receiver._take(self.path, body)
                    self.send_response(200)
                except Exception as exc:  # a test sees it as a missing span
                    print(f"otlp receiver: {exc}", file=sys.stderr)
                    self.send_response(400)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _take(self, path: str, body: bytes) -> None:
        with self._lock:
            self.bodies.append(body)
        if path.endswith("/v1/traces"):
            from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

            request = ExportTraceServiceRequest.FromString(body)
            found = []
            for resource_spans in request.resource_spans:
                resource = {kv.key: _value(kv.value) for kv in resource_spans.resource.attributes}
                for scope in resource_spans.scope_spans:
                    for s in scope.spans:
                        found.append(Span(
                            name=s.name, trace_id=s.trace_id.hex(), span_id=s.span_id.hex(),
                            parent_id=s.parent_span_id.hex(), kind=s.kind,
                            attributes={kv.key: _value(kv.value) for kv in s.attributes},
                            status=s.status.code, start_ns=s.start_time_unix_nano,
                            end_ns=s.end_time_unix_nano, service=str(resource.get("service.name", "")),
                            events=[e.name for e in s.events]))
            with self._lock:
                self.spans.extend(found)
            if self.on_spans is not None:
                self.on_spans(found)
        elif path.endswith("/v1/metrics"):
            from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
                ExportMetricsServiceRequest,
            )

            request = ExportMetricsServiceRequest.FromString(body)
            with self._lock:
                for resource_metrics in request.resource_metrics:
                    for scope in resource_metrics.scope_metrics:
                        for metric in scope.metrics:
                            data = getattr(metric, metric.WhichOneof("data"))
                            for point in data.data_points:
                                attributes = {kv.key: _value(kv.value) for kv in point.attributes}
                                self.metrics.append((metric.name, attributes, point))

    def tree(self, spans: list[Span] | None = None) -> str:
        """The spans as indented trees, one per trace, children in start order."""
        return format_tree(self.spans if spans is None else spans)


def format_tree(spans: list[Span]) -> str:
    ids = {s.span_id for s in spans}
    children: dict[str, list[Span]] = {}
    for s in spans:
        children.setdefault(s.parent_id if s.parent_id in ids else "", []).append(s)
    lines: list[str] = []

    def walk(span: Span, depth: int) -> None:
        ms = (span.end_ns - span.start_ns) / 1e6
        keys = ("pi.batch.task.id", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens",
                "gen_ai.tool.call.id", "pi.usage.cost_usd")
        shown = " ".join(f"{k.split('.')[-1]}={span.attributes[k]}" for k in keys if k in span.attributes)
        lines.append(f"{'  ' * depth}{span.name}  {ms:.1f} ms  {shown}".rstrip())
        for child in sorted(children.get(span.span_id, []), key=lambda c: c.start_ns):
            walk(child, depth + 1)

    for root in sorted(children.get("", []), key=lambda s: s.start_ns):
        lines.append(f"trace {root.trace_id}" + (f" (parent {root.parent_id})" if root.parent_id else ""))
        walk(root, 1)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    port = int(args[0]) if args else 4318
    touched: set[str] = set()
    timer: list[threading.Timer] = []
    lock = threading.Lock()

    def show() -> None:  # a second after the last export: the traces it touched, whole
        with lock:
            ids = set(touched)
            touched.clear()
        print(format_tree([s for s in receiver.spans if s.trace_id in ids]), flush=True)

    def arrived(spans: list[Span]) -> None:
        with lock:
            touched.update(s.trace_id for s in spans)
            if timer:
                timer.pop().cancel()
            timer.append(threading.Timer(1.0, show))
            timer[0].daemon = True
            timer[0].start()

    with OtlpReceiver(port, on_spans=arrived) as receiver:
        print(f"listening on {receiver.endpoint} (OTLP/HTTP); Ctrl-C stops", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
