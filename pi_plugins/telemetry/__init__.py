"""OpenTelemetry traces and metrics of every run, by the GenAI semantic conventions, on
hooks alone (docs/telemetry.md).

Off unless ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is
set, and ``OTEL_SDK_DISABLED`` is not ``true``; then on in every mode. Off, each hook is
an environment lookup and no opentelemetry module is imported: the SDK lives in
:mod:`pi_plugins.telemetry.otel`, imported on the first hook that finds it on (the extra
``otel`` installs it). Telemetry never breaks a run: a failure inside it is reported once
on stderr and telemetry turns itself off for the process.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Any

from pi_core import hookimpl

_ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
_CONFIG = _ENDPOINTS + ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_SERVICE_NAME",
                        "OTEL_RESOURCE_ATTRIBUTES", "OTEL_EXPORTER_OTLP_HEADERS",
                        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")

_telemetry: Any = None   # the live pi_plugins.telemetry.otel.Telemetry
_config: tuple | None = None  # the variables it was built from
_broken = False


def enabled() -> bool:
    """Whether the standard variables turn telemetry on in this process now."""
    environ = os.environ
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return any(environ.get(name) for name in _ENDPOINTS)


def _get():
    """The live telemetry, built (or rebuilt, when the variables changed) on first use;
    None when off or broken. Reads the variables each time (a run's start and
    ``work_span`` ask this; the hooks within a run ask :func:`_live`)."""
    global _telemetry, _config
    if _broken or not enabled():
        if _telemetry is not None:
            shutdown()
        return None
    config = tuple(os.environ.get(name) for name in _CONFIG)
    if _telemetry is None or config != _config:
        try:
            from pi_plugins.telemetry.otel import Telemetry

            if _telemetry is not None:
                _telemetry.shutdown()
            _telemetry, _config = Telemetry.from_environment(), config
        except Exception as exc:  # no SDK installed, a bad variable: say so once, run on
            _off(exc)
            return None
    return _telemetry


def shutdown() -> None:
    """Export what is pending and stop (at exit this happens by itself); the next hook
    that finds telemetry on starts it afresh."""
    global _telemetry, _config
    telemetry, _telemetry, _config = _telemetry, None, None
    if telemetry is not None:
        telemetry.shutdown()


def _off(exc: BaseException) -> None:
    global _broken, _telemetry
    _broken, _telemetry = True, None
    print(f"pi: telemetry is off: {type(exc).__name__}: {exc}", file=sys.stderr)


def _call(method: str, *args: Any) -> Any:
    """Call the live telemetry's ``method``: a global read when off (a run's start
    decided), so the hooks cost nothing measurable then."""
    telemetry = _telemetry
    if telemetry is None:
        return None
    try:
        return getattr(telemetry, method)(*args)
    except Exception as exc:  # never break a run
        _off(exc)
        return None


@contextmanager
def work_span(name: str, attributes: dict | None = None):
    """A span around a piece of work that holds runs (``pi batch``: the batch and each of
    its tasks); the runs inside become its children. Nothing at all when off."""
    telemetry = _get()
    if telemetry is None:
        yield
        return
    try:
        manager = telemetry.work_span(name, attributes or {})
        manager.__enter__()
    except Exception as exc:
        _off(exc)
        yield
        return
    try:
        yield
    finally:
        try:
            manager.__exit__(None, None, None)
        except Exception as exc:
            _off(exc)


def trace_carrier() -> dict:
    """The current span's W3C trace context (``{"traceparent": …}``) to send with work
    to another process (``pi batch`` on Ray); empty when off."""
    telemetry = _get()
    if telemetry is None:
        return {}
    try:
        return telemetry.carrier()
    except Exception as exc:
        _off(exc)
        return {}


@contextmanager
def joined(carrier: dict | None):
    """Runs inside are children of the span ``carrier`` (from :func:`trace_carrier` in
    another process) names. Nothing when off or when the carrier is empty."""
    telemetry = _get() if carrier else None
    if telemetry is None:
        yield
        return
    try:
        manager = telemetry.joined(carrier)
        manager.__enter__()
    except Exception as exc:
        _off(exc)
        yield
        return
    try:
        yield
    finally:
        try:
            manager.__exit__(None, None, None)
        except Exception as exc:
            _off(exc)


# ------------------------------------------------------------------ hooks


@hookimpl
def agent_start(event, ctx):
    if _get() is not None:  # a run's start reads the variables: on, off or changed
        _call("agent_start", ctx)


async def _flush(flush) -> None:
    if flush is not None:  # the outermost work ended: export now, off the event loop
        import asyncio

        try:
            await asyncio.to_thread(flush)
        except Exception as exc:
            _off(exc)


@hookimpl
def agent_end(event, ctx):
    _call("agent_end", event, ctx)


@hookimpl
def prepare_request(request, ctx):
    _call("request_start", request, ctx)


@hookimpl
def message_end(message, ctx):
    if getattr(message, "role", None) == "assistant":
        _call("request_end", message, ctx)


@hookimpl
def tool_execution_start(event, ctx):
    _call("tool_start", event, ctx)


@hookimpl
def tool_execution_end(event, ctx):
    _call("tool_end", event, ctx)


@hookimpl
def compaction_start(event, ctx):
    _call("compaction_start", event, ctx)


@hookimpl
def compaction_end(event, ctx):
    _call("compaction_end", event, ctx)


@hookimpl
def auto_retry_start(event, ctx):
    _call("retry_start", event, ctx)


@hookimpl
async def auto_retry_end(event, ctx):
    await _flush(_call("retry_end", event, ctx))


@hookimpl
async def session_shutdown(event, ctx):
    """The harness leaves its session (``close()``, a switch, the end of ``pi -p``):
    export what its runs left, off the event loop."""
    await _flush(_call("forget", ctx))
