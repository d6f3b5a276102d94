"""The real ``pi -p`` in a fresh interpreter: with the OTLP variables unset no
opentelemetry module is ever imported; with them set the run's trace reaches the
receiver by the time the process has ended."""

import json
import sys

import pytest

from pi_core.testing import assert_light_import
from pi_core.testing.otlp import OtlpReceiver

from support.llm_server import Reply

pytestmark = pytest.mark.process

#: Runs pi's command line, then reports the opentelemetry modules it imported on stderr.
PROBE = (
    "import atexit, runpy, sys\n"
    "atexit.register(lambda: sys.stderr.write('OTEL-MODULES:' + ','.join(sorted("
    "m for m in sys.modules if m.startswith('opentelemetry'))) + '\\n'))\n"
    "sys.argv = ['pi', *sys.argv[1:]]\n"
    "runpy.run_module('pi_plugins.cli', run_name='__main__')\n"
)


def run_probe(pi, *args, env=None):
    import subprocess

    return subprocess.run([sys.executable, "-c", PROBE, *pi.flags(*args)], cwd=pi.cwd,
                          env={**pi.env, **(env or {})}, capture_output=True, text=True, timeout=60)


def imported(done) -> list[str]:
    [line] = [l for l in done.stderr.splitlines() if l.startswith("OTEL-MODULES:")]
    return [m for m in line.removeprefix("OTEL-MODULES:").split(",") if m]


def test_with_the_variables_unset_pi_p_imports_no_opentelemetry_module(pi, server):
    server.push(Reply(text="plain answer"))
    done = run_probe(pi, "-p", "hello")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "plain answer"
    assert imported(done) == []


def test_with_the_endpoint_set_pi_p_exports_its_trace_before_it_exits(pi, server):
    pytest.importorskip("opentelemetry.sdk")
    server.push(Reply(tool_calls=[("read", {"path": "note.txt"})]), Reply(text="read it"))
    (pi.cwd / "note.txt").write_text("a note\n")
    with OtlpReceiver() as receiver:
        done = run_probe(pi, "-p", "read the note", env={
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_SERVICE_NAME": "pi-cli",
            "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=test"})
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "read it"
        names = sorted(s.name for s in receiver.spans)
    assert names == ["chat test-model", "chat test-model", "execute_tool read", "invoke_agent"]
    assert "opentelemetry.sdk.trace" in imported(done)
    assert {s.service for s in receiver.spans} == {"pi-cli"}


def test_the_plugin_module_imports_light_and_without_opentelemetry():
    assert_light_import("pi_plugins.telemetry", also=("opentelemetry",))
