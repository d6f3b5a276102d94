"""``pi batch`` on a real local Ray is one trace too: the trace context travels with each
task to its worker, whose run hangs under the driver's span for the task."""

import asyncio
import json

import pytest

from pi_core.testing.otlp import OtlpReceiver
from pi_plugins import telemetry
from pi_plugins.batch.runner import run_batch

from support.batches import lister, tasks

pytestmark = pytest.mark.process
pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("ray")


def test_a_batch_on_a_local_ray_is_one_trace_with_each_tasks_run_under_its_span(tmp_path, server, monkeypatch):
    import ray

    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "models.json").write_text(json.dumps(server.models_json("local")))
    (tmp_path / "project").mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    monkeypatch.delenv("TRACEPARENT", raising=False)
    server.default = lister
    batch = tasks(4, tmp_path / "project")
    with OtlpReceiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
        # started after the variables are set: its workers inherit them
        ray.init(_node_ip_address="127.0.0.1", num_cpus=2, include_dashboard=False, log_to_driver=False,
                 object_store_memory=80 * 1024 * 1024)
        try:
            results = asyncio.run(run_batch(batch, concurrency=2, executor="ray",
                                            cwd=str(tmp_path / "project")))
        finally:
            ray.shutdown()  # the workers exit, exporting what they hold
            telemetry.shutdown()
        spans = list(receiver.spans)
    assert len(results) == 4 and not any("error" in r for r in results)
    assert len({s.trace_id for s in spans}) == 1
    [root] = [s for s in spans if s.name == "pi batch"]
    task_spans = [s for s in spans if s.name == "batch_task"]
    assert len(task_spans) == 4 and all(t.parent_id == root.span_id for t in task_spans)
    runs = [s for s in spans if s.name == "invoke_agent"]
    assert sorted(r.parent_id for r in runs) == sorted(t.span_id for t in task_spans)
    assert len([s for s in spans if s.name == "execute_tool ls"]) == 4
